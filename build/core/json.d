build/core/json.o: core/json.c core/json.h
core/json.h:
