//! The code pass on small programs: each rule's catch and a look-alike it leaves alone.
