package nfs

import (
	"container/list"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"strings"
	"sync"

	"github.com/recfs/recfs/fs"
)

// File handles. A handle names an entry by what identifies it, never by a
// slot in a table: the path of its anchor (the entry itself for a
// directory, a passed-through file or a record directory; the record
// directory for a record, .recfs, .recfs-summary and the trailer), the
// anchor's inode number (the tree derives it from the source file's
// device and inode), the record number, and how many rewrites of the
// source this server had seen. A handle is therefore valid across server
// restarts, and goes stale (NFS3ERR_STALE) when the path names another
// file, or when the source was rewritten after the handle was made, so
// that a client never reads a record of one version under the handle of
// another.
//
// Layout (at most 64 bytes, NFS3_FHSIZE):
//
//	0      magic 'R'
//	1      layout version 1
//	2      fs.Kind of the entry
//	3:7    rewrite epoch (records and what belongs to their directory)
//	7:15   inode number of the anchor
//	15:23  record or trailer item number
//	23     length L of the anchor's path, or longPath
//	24:    the path (L bytes), or the 8-byte hash of a long path
//	       zeros up to a multiple of 4 bytes
//
// A handle's length is a multiple of 4: go-nfs reads a handle without the
// XDR padding after it, so the argument that follows one of another
// length (ACCESS's mask) would be read from the padding.
//
// Paths longer than maxInline bytes are kept in a bounded table of long
// paths (longPaths entries, least recently used dropped); a handle whose
// long path was dropped, or that a restarted server never saw, is stale.

const (
	handleMagic   = 'R'
	handleVersion = 1
	headerLen     = 24
	maxHandle     = 64
	maxInline     = maxHandle - headerLen
	longPath      = 0xff
	longPaths     = 1 << 16
)

// errStale is the error of a handle that names nothing (any more).
var errStale = errors.New("nfs: stale file handle")

// handle is a decoded file handle.
type handle struct {
	kind  fs.Kind
	epoch uint32
	ino   uint64 // of the anchor
	n     int64
	path  string // of the anchor, slash-separated, "" for the root
}

// anchored reports whether entries of kind k are named through their
// record directory.
func anchored(k fs.Kind) bool {
	switch k {
	case fs.KindRecord, fs.KindTrailerDir, fs.KindTrailer, fs.KindInfo, fs.KindSummary:
		return true
	}
	return false
}

// pathTable keeps the paths too long to be inlined in a handle, by hash.
type pathTable struct {
	mu  sync.Mutex
	lru *list.List // of longEntry, most recent first
	m   map[uint64]*list.Element
}

type longEntry struct {
	key  uint64
	path string
}

func newPathTable() *pathTable {
	return &pathTable{lru: list.New(), m: map[uint64]*list.Element{}}
}

func pathKey(p string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(p))
	return h.Sum64()
}

func (pt *pathTable) put(p string) uint64 {
	k := pathKey(p)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if e, ok := pt.m[k]; ok {
		e.Value = longEntry{k, p}
		pt.lru.MoveToFront(e)
		return k
	}
	pt.m[k] = pt.lru.PushFront(longEntry{k, p})
	for pt.lru.Len() > longPaths {
		e := pt.lru.Back()
		pt.lru.Remove(e)
		delete(pt.m, e.Value.(longEntry).key)
	}
	return k
}

func (pt *pathTable) get(k uint64) (string, bool) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	e, ok := pt.m[k]
	if !ok {
		return "", false
	}
	pt.lru.MoveToFront(e)
	return e.Value.(longEntry).path, true
}

// encode returns the bytes of h.
func (pt *pathTable) encode(h handle) []byte {
	b := make([]byte, headerLen, maxHandle)
	b[0], b[1], b[2] = handleMagic, handleVersion, byte(h.kind)
	binary.BigEndian.PutUint32(b[3:], h.epoch)
	binary.BigEndian.PutUint64(b[7:], h.ino)
	binary.BigEndian.PutUint64(b[15:], uint64(h.n))
	if len(h.path) <= maxInline {
		b[23] = byte(len(h.path))
		b = append(b, h.path...)
		return append(b, make([]byte, pad4(len(h.path))-len(h.path))...)
	}
	b[23] = longPath
	return binary.BigEndian.AppendUint64(b, pt.put(h.path))
}

// decode parses a handle; errStale if it is not one of ours or its long
// path is unknown.
func (pt *pathTable) decode(b []byte) (handle, error) {
	if len(b) < headerLen || len(b) > maxHandle || b[0] != handleMagic || b[1] != handleVersion {
		return handle{}, errStale
	}
	h := handle{kind: fs.Kind(b[2]), epoch: binary.BigEndian.Uint32(b[3:]), ino: binary.BigEndian.Uint64(b[7:]), n: int64(binary.BigEndian.Uint64(b[15:]))}
	rest := b[headerLen:]
	switch {
	case b[23] == longPath:
		if len(rest) != 8 {
			return handle{}, errStale
		}
		p, ok := pt.get(binary.BigEndian.Uint64(rest))
		if !ok {
			return handle{}, errStale
		}
		h.path = p
	case int(b[23]) <= maxInline && pad4(int(b[23])) == len(rest) && allZero(rest[b[23]:]):
		h.path = string(rest[:b[23]])
	default:
		return handle{}, errStale
	}
	if h.path != "" && (strings.HasPrefix(h.path, "/") || strings.HasSuffix(h.path, "/")) {
		return handle{}, errStale
	}
	return h, nil
}

// pad4 rounds n up to a multiple of 4.
func pad4(n int) int { return (n + 3) &^ 3 }

// allZero reports whether b holds only zeros.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
