package fs

// Inode numbers are derived, not allocated, so that the same file yields
// the same numbers on every mount: each kind of entry of a source file
// (records, trailer items, ...) starts at a base mixed from the file's
// (device, inode) and the kind, and entry n of that kind is base+n. Within
// one source file the numbers of one kind are distinct by construction;
// two files' ranges meet only if their 64-bit bases fall within a file's
// length of each other.
//
// Consecutive numbers matter: GNU fts (grep -r, find, du) reads a
// directory of more than 10,000 entries in inode order, so records
// numbered in record order are read in file order — sequential reads of
// the source, and of an object store's blocks, instead of random ones.

// Entry kinds folded into inode numbers.
const (
	inoKindPlain   = 1 // a mirrored directory or passed-through file: its own inode
	inoKindRecDir  = 2 // a record file shown as a directory
	inoKindRecord  = 3
	inoKindTrDir   = 4
	inoKindTrItem  = 5
	inoKindInfo    = 6
	inoKindPending = 7
	inoKindSummary = 8
)

// mix64 is the splitmix64 finaliser, a bijection on 64-bit values.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// fileKey hashes a source file's identity.
func fileKey(dev, ino uint64) uint64 {
	return mix64(mix64(dev+0x9e3779b97f4a7c15) ^ ino)
}

// makeIno returns the inode number of entry (kind, n) of the file with key:
// the kind's base plus n (modulo 2^64). It never returns 0 or 1 (1 is
// FUSE's root node ID).
func makeIno(key uint64, kind uint8, n int64) uint64 {
	v := mix64(key^mix64(uint64(kind)<<56)) + uint64(n)
	if v < 2 {
		v += 2
	}
	return v
}
