#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmx.h"

static int by_value(const void* a, const void* b) {
    float x = *(const float*)a, y = *(const float*)b;
    return (x > y) - (x < y);
}

int kmx_main(int core) {
    uint64_t bytes;
    const float* samples = kmx_region(0, &bytes);
    size_t n = bytes / sizeof(float);
    assert(n % 2 == 0);
    kmx_invalidate(0);

    float* sorted = malloc(bytes);
    if (sorted == NULL) return 1;
    memcpy(sorted, samples, bytes);
    qsort(sorted, n, sizeof(float), by_value);

    double sum = 0, squares = 0;
    for (size_t i = 0; i < n; i++) {
        sum += sorted[i];
        squares += (double)sorted[i] * sorted[i];
    }
    double mean = sum / n;
    double deviation = sqrt(squares / n - mean * mean);
    double median = (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    free(sorted);

    printf("%zu samples: mean %.4f, deviation %.4f, median %.4f\n", n, mean, deviation, median);
    float out[3] = {(float)mean, (float)deviation, (float)median};
    kmx_result(0, (const uint32_t*)out, 3);
    return 0;
}
