build/symbolize/layout_path.o: symbolize/layout_path.c symbolize/layout.h \
 core/arena.h core/err.h
symbolize/layout.h:
core/arena.h:
core/err.h:
