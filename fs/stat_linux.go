//go:build linux

package fs

import (
	"os"
	"syscall"
	"time"
)

// statOf extracts the identity, owner and times of a file.
func statOf(fi os.FileInfo) statInfo {
	s := statInfo{size: fi.Size(), mode: uint32(fi.Mode().Perm()), typ: typeOf(fi.Mode()), mtime: fi.ModTime(), atime: fi.ModTime(), ctime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino = uint64(st.Dev), uint64(st.Ino)
		s.uid, s.gid = st.Uid, st.Gid
		s.atime = time.Unix(int64(st.Atim.Sec), int64(st.Atim.Nsec))
		s.ctime = time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
	}
	return s
}
