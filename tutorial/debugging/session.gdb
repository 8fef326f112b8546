info threads
break scale
continue
print value
finish
delete
watch -l scaled[1023]
continue
monitor cache scaled
monitor findings
delete
continue
