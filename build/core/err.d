build/core/err.o: core/err.c core/err.h
core/err.h:
