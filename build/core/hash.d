build/core/hash.o: core/hash.c core/hash.h
core/hash.h:
