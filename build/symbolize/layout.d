build/symbolize/layout.o: symbolize/layout.c symbolize/layout_int.h \
 core/hash.h symbolize/layout.h core/arena.h core/err.h
symbolize/layout_int.h:
core/hash.h:
symbolize/layout.h:
core/arena.h:
core/err.h:
