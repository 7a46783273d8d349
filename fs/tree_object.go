package fs

import (
	"hash/fnv"
	"os"
	"time"
)

// NewObject returns the read-only tree of a single record file that is not
// a local file, an object in a store: name (an s3:// URL) names it in logs
// and .recfs, size and mtime are its stat, src its opened table. Its owner
// is the mounting user; every change fails with EROFS.
func NewObject(name string, size int64, mtime time.Time, src Records, o Options) (*Tree, error) {
	o.ReadWrite = false
	h := fnv.New64a()
	h.Write([]byte(name))
	st := statInfo{ino: h.Sum64(), uid: uint32(os.Getuid()), gid: uint32(os.Getgid()), mode: 0o444,
		typ: typeReg, size: size, atime: mtime, mtime: mtime, ctime: mtime}
	t := newTree(name, o)
	rd := &recDir{path: name, st: st, key: fileKey(0, st.ino), src: src}
	t.opens = append(t.opens, rd)
	t.root = Node{Kind: KindRecordDir, rd: rd}
	return t, nil
}
