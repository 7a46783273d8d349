//go:build !linux

package fs

import "os"

// statOf extracts what is portable of a file's identity and times; inode
// numbers then depend on the path's modification time only.
func statOf(fi os.FileInfo) statInfo {
	return statInfo{size: fi.Size(), mode: uint32(fi.Mode().Perm()), typ: typeOf(fi.Mode()), mtime: fi.ModTime(), atime: fi.ModTime(), ctime: fi.ModTime(),
		ino: uint64(fi.ModTime().UnixNano())}
}
