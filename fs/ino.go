package fs

// Inode numbers are derived, not allocated: a 64-bit mix of the source
// file's (device, inode), the kind of entry and the record number. The same
// file therefore yields the same numbers on every mount. Within one source
// file the numbers are distinct by construction (the mix is a bijection for
// a fixed file); entries of two different files collide only if two 64-bit
// hashes do.

// Entry kinds folded into inode numbers.
const (
	inoKindPlain   = 1 // a mirrored directory or passed-through file: its own inode
	inoKindRecDir  = 2 // a record file shown as a directory
	inoKindRecord  = 3
	inoKindTrDir   = 4
	inoKindTrItem  = 5
	inoKindInfo    = 6
	inoKindPending = 7
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

// makeIno returns the inode number of entry (kind, n) of the file with key.
// It never returns 0 or 1 (1 is FUSE's root node ID).
func makeIno(key uint64, kind uint8, n int64) uint64 {
	v := mix64(key ^ mix64(uint64(kind)<<56^uint64(n)))
	if v < 2 {
		v += 2
	}
	return v
}
