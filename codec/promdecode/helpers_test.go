package promdecode

import (
	"encoding/binary"
	iofs "io/fs"
	"math"
	"testing"

	"github.com/recfs/recfs/codec/decode"
)

// enc builds records as Prometheus's tsdb/record encoder lays them out.
type enc struct{ b []byte }

func rec(t byte) *enc            { return &enc{b: []byte{t}} }
func (e *enc) be(v uint64) *enc  { e.b = binary.BigEndian.AppendUint64(e.b, v); return e }
func (e *enc) f(v float64) *enc  { return e.be(math.Float64bits(v)) }
func (e *enc) uv(v uint64) *enc  { e.b = binary.AppendUvarint(e.b, v); return e }
func (e *enc) v(v int64) *enc    { e.b = binary.AppendVarint(e.b, v); return e }
func (e *enc) byte1(c byte) *enc { e.b = append(e.b, c); return e }
func (e *enc) str(s string) *enc { e.uv(uint64(len(s))); e.b = append(e.b, s...); return e }
func (e *enc) labels(kv ...string) *enc {
	e.uv(uint64(len(kv) / 2))
	for _, s := range kv {
		e.str(s)
	}
	return e
}

// render renders the records of one source in order, learning as a
// session does, and returns the text of the last one.
func render(t testing.TB, d *Decoder, o decode.Output, recs ...[]byte) (string, error) {
	t.Helper()
	var out []byte
	var err error
	for i, r := range recs {
		w := decode.NewWriter(nil, o, int64(i))
		err = d.Decode(w, &decode.Record{N: int64(i), Payload: r})
		out = w.B
		d.Learn(&decode.Record{N: int64(i), Payload: r})
	}
	return string(out), err
}

// memDir is a decode.Dir of record files held in memory.
type memDir map[string][][]byte

func (m memDir) Names() ([]string, error) {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out, nil
}

func (m memDir) ReadFile(name string, max int64) ([]byte, error) { return nil, nil }

func (m memDir) OpenRecords(name string) (decode.RecordsCloser, error) {
	return memRecords(m[name]), nil
}

type memRecords [][]byte

func (r memRecords) Len() int64         { return int64(len(r)) }
func (r memRecords) Size(n int64) int64 { return int64(len(r[n])) }
func (r memRecords) Close() error       { return nil }
func (r memRecords) ReadAt(n int64, p []byte, off int64) (int, error) {
	return copy(p, r[n][off:]), nil
}

// memTree is a memDir with directories in it (decode.SubDirs).
type memTree struct {
	memDir
	subs map[string]memDir
}

func (m memTree) Names() ([]string, error) {
	out, _ := m.memDir.Names()
	for k := range m.subs {
		out = append(out, k)
	}
	return out, nil
}

func (m memTree) Sub(name string) (decode.Dir, error) {
	d, ok := m.subs[name]
	if !ok {
		return nil, iofs.ErrNotExist
	}
	return d, nil
}

// sharedEnv returns the env of the source name in dir, sharing state
// with the other envs it makes, as a mount's sessions do.
func sharedEnv(dir decode.Dir) func(name string) decode.Env {
	shared := map[string]any{}
	return func(name string) decode.Env {
		return decode.Env{Path: "/x/wal/" + name, Dir: dir, Shared: func(k string, mk func() any) any {
			if v, ok := shared[k]; ok {
				return v
			}
			shared[k] = mk()
			return shared[k]
		}}
	}
}
