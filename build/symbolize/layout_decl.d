build/symbolize/layout_decl.o: symbolize/layout_decl.c symbolize/layout.h \
 core/arena.h core/err.h
symbolize/layout.h:
core/arena.h:
core/err.h:
