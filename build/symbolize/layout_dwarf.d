build/symbolize/layout_dwarf.o: symbolize/layout_dwarf.c \
 symbolize/layout_int.h core/hash.h symbolize/layout.h core/arena.h \
 core/err.h
symbolize/layout_int.h:
core/hash.h:
symbolize/layout.h:
core/arena.h:
core/err.h:
