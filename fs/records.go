package fs

// Records of a record directory, for adapters that answer the kernel about
// records without a node object per record: a record's inode number is
// FirstRecordIno plus its number, so an adapter can use inode numbers as
// the kernel's node IDs and map them back with Record.

// FirstRecordIno returns the inode number of record 0 of the record
// directory dir; record n's is that plus n. It returns 0 for other nodes.
func (dir Node) FirstRecordIno() uint64 {
	if dir.Kind != KindRecordDir {
		return 0
	}
	return makeIno(dir.rd.key, inoKindRecord, 0)
}

// Record returns the node of record n of the record directory dir. The
// number is not checked against the record count: Getattr, Open and
// ReadAt of the node are, and fail with an error matching
// io/fs.ErrNotExist past it.
func (dir Node) Record(n int64) Node {
	if dir.Kind != KindRecordDir {
		return Node{}
	}
	return Node{Kind: KindRecord, N: n, rd: dir.rd}
}

// Record returns the record node of the entry e of a record directory's
// listing; ok is false for its other entries (".", "..", trailer/, .recfs)
// and for every entry of other directories.
func (d *Dir) Record(e DirEntry) (n Node, ok bool) {
	if d.n.Kind != KindRecordDir || e.Off <= uint64(len(d.dots)) {
		return Node{}, false
	}
	i := int64(e.Off) - 1 - int64(len(d.dots))
	if i >= d.count {
		return Node{}, false
	}
	return d.n.Record(i), true
}
