// Package fs is the backend-neutral file tree that recfs mounts: it turns
// record tables (package index) into directories of numbered read-only files,
// and knows nothing of byte layouts or of FUSE.
//
// It is the fourth stage of the pipeline (file → codec → index → fs →
// adapter → kernel). The FUSE adapters (fs/gofuse, fs/bazil) call the
// node-level API of [Tree] — Lookup, Getattr, OpenDir, Open, Xattrs — and
// turn its errors into errnos with [Errno]. What they tell the kernel about
// caching, names, extended attributes and statfs is decided once, by
// [Policy]; they only map its answers to their library's flags, and
// package fs/fusetest holds the node suite both run. [Tree.FS] offers the
// same tree as an io/fs.FS for tests and tools that have no kernel;
// directory trees read their own source through an io/fs.FS too (see
// sourcefs.go), one that never follows a symbolic link.
//
// The user-visible contract:
//
//   - A record directory holds one file per record, named by its zero-padded
//     decimal number (width max(6, digits(Len-1))), so that ls and shell
//     globs list records in order. A lookup of the unpadded number finds the
//     same record; any other name does not exist.
//   - A grailbio file with a trailer also has trailer/, whose single file
//     000000 holds the trailer bytes.
//   - .recfs is a small text file describing the record file: format,
//     flavor, record count, bytes, header key/values, trailer size, where
//     the index came from and every damaged range.
//   - Files are mode 0444 and directories 0555; owner, group and times
//     follow the source file.
//   - Inode numbers are derived from the source file's (device, inode) and
//     the record number, so they are the same across remounts, and records
//     are numbered consecutively, so inode order is record order.
//   - A tree mount mirrors a source directory: regular files whose content is
//     a record file become record directories, indexed lazily on first
//     lookup or listing; other regular files are passed through read-only
//     (or hidden); symbolic links, devices and sockets are left out.
//   - Writing (Options.ReadWrite, recfs mount --rw): a file created in a
//     record directory is buffered and appended as one record when it is
//     flushed (close(2)) — [Tree.Create], [WriteHandle]; mkdir in a mirrored
//     directory creates an empty record file ([Tree.Mkdir]). Existing
//     entries refuse every change with EPERM; a read-only tree refuses
//     everything with EROFS.
//
// Concurrency: a Tree is safe for concurrent use. Node values are small,
// immutable and may be copied; nothing is kept per record.
package fs
