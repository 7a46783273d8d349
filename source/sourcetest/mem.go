// Package sourcetest holds fake sources for tests of code that reads
// through source: bytes in memory with an identity, whose version can
// be moved to simulate an overwrite.
package sourcetest

import (
	"bytes"
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
	key  string
	data []byte
	ver  int

	mu     sync.Mutex
	cur    []byte
	curVer int
	reads  atomic.Int64
	closed atomic.Bool
}

// NewMem returns a source of data named key, at version 1.
func NewMem(key string, data []byte) *Mem {
	return &Mem{key: key, data: data, ver: 1, cur: data, curVer: 1}
}

// ReadAt reads the version the source was made with.
func (m *Mem) ReadAt(p []byte, off int64) (int, error) {
	m.reads.Add(1)
	m.mu.Lock()
	changed := m.curVer != m.ver
	m.mu.Unlock()
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
	m.mu.Lock()
	defer m.mu.Unlock()
	return source.Identity{Key: m.key, Version: fmt.Sprintf("v%d", m.curVer)}, int64(len(m.cur)), nil
}

// Close marks the source closed.
func (m *Mem) Close() error { m.closed.Store(true); return nil }

// Replace overwrites the object with data, as another writer would.
func (m *Mem) Replace(data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur, m.curVer = data, m.curVer+1
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
