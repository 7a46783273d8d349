// Package sourcetest holds fake sources for tests of code that reads
// through source: bytes in memory with an identity, whose version can
// be moved to simulate an overwrite.
package sourcetest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/recfs/recfs/source"
)

// Mem is a source.Source (and source.Stater, source.Closer) of bytes in
// memory, like an object in a store pinned to one version: once Replace
// gave it new bytes, reads fail with source.ErrChanged and Stat reports
// the new version.
type Mem struct {
	key    string
	data   []byte
	ver    int
	obj    *memObject // what the store holds now, shared by the versions
	reads  atomic.Int64
	closed atomic.Bool
}

// memObject is the store's current version of a Mem's object.
type memObject struct {
	mu     sync.Mutex
	cur    []byte
	curVer int
}

// NewMem returns a source of data named key, at version 1.
func NewMem(key string, data []byte) *Mem {
	return &Mem{key: key, data: data, ver: 1, obj: &memObject{cur: data, curVer: 1}}
}

// ReadAt reads the version the source was made with.
func (m *Mem) ReadAt(p []byte, off int64) (int, error) {
	m.reads.Add(1)
	m.obj.mu.Lock()
	changed := m.obj.curVer != m.ver
	m.obj.mu.Unlock()
	if changed {
		return 0, fmt.Errorf("sourcetest: %s: %w", m.key, source.ErrChanged)
	}
	return bytes.NewReader(m.data).ReadAt(p, off)
}

// Size is the length of the version the source was made with.
func (m *Mem) Size() int64 { return int64(len(m.data)) }

// Identity names the key and the version the source was made with.
func (m *Mem) Identity() source.Identity {
	return source.Identity{Key: m.key, Version: fmt.Sprintf("v%d", m.ver)}
}

// Stat returns the current version and size.
func (m *Mem) Stat() (source.Identity, int64, error) {
	m.obj.mu.Lock()
	defer m.obj.mu.Unlock()
	return source.Identity{Key: m.key, Version: fmt.Sprintf("v%d", m.obj.curVer)}, int64(len(m.obj.cur)), nil
}

// Close marks the source closed.
func (m *Mem) Close() error { m.closed.Store(true); return nil }

// Replace overwrites the object with data, as another writer would.
func (m *Mem) Replace(data []byte) {
	m.obj.mu.Lock()
	defer m.obj.mu.Unlock()
	m.obj.cur, m.obj.curVer = data, m.obj.curVer+1
}

// Reads returns how many ReadAt calls the source served.
func (m *Mem) Reads() int64 { return m.reads.Load() }

// Closed reports whether Close was called.
func (m *Mem) Closed() bool { return m.closed.Load() }

var (
	_ source.Source = (*Mem)(nil)
	_ source.Stater = (*Mem)(nil)
	_ source.Closer = (*Mem)(nil)
)

// Reopenable is a Mem that is also a source.Reopener, like an object of a
// store that can be opened again at its new version.
type Reopenable struct {
	*Mem
	first   *Reopenable // the version NewReopenable made, which counts the others
	reopens atomic.Int64
	latest  atomic.Pointer[Reopenable]
}

// NewReopenable returns a reopenable source of data named key, at version 1.
func NewReopenable(key string, data []byte) *Reopenable {
	r := &Reopenable{Mem: NewMem(key, data)}
	r.first = r
	r.latest.Store(r)
	return r
}

// Reopen returns the object at its current version, sharing the store
// (Replace on any version overwrites the one object).
func (r *Reopenable) Reopen(context.Context) (source.Source, error) {
	r.first.reopens.Add(1)
	r.obj.mu.Lock()
	defer r.obj.mu.Unlock()
	m := &Mem{key: r.key, data: r.obj.cur, ver: r.obj.curVer, obj: r.obj}
	n := &Reopenable{Mem: m, first: r.first}
	r.first.latest.Store(n)
	return n, nil
}

// Latest returns the version the last Reopen returned (the first version
// before any).
func (r *Reopenable) Latest() *Reopenable { return r.first.latest.Load() }

// Reopens returns how many times any version of the object was reopened.
func (r *Reopenable) Reopens() int64 { return r.first.reopens.Load() }

var _ source.Reopener = (*Reopenable)(nil)
