"""Records with no I/O: the rows every repository in `store/` reads and writes, and the one
row mapping (`base.Record`) they share. The store maps rows onto them; the domain reads them."""
