package leveldb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// TestLogWriterPebbleVectors regenerates the pebble WAL vectors with the
// recyclable and WAL-sync flavours of Writer: the bytes must be pebble's
// up to its end-of-log marker (pebble zero-fills a short block tail at once,
// Writer only when a chunk follows, so the marker may follow zeros).
func TestLogWriterPebbleVectors(t *testing.T) {
	t.Parallel()
	n := 0
	for _, v := range loadLogVectors(t) {
		if !strings.HasPrefix(v.m.Writer, "pebble") {
			continue
		}
		n++
		t.Run(v.m.Name, func(t *testing.T) {
			_, s := logScanAll(t, v.data, Options{})
			info := s.Info()
			o := info.AppendOptions(0)
			if !o.Recyclable && !o.WALSync || o.LogNum != 7 {
				t.Fatalf("AppendOptions %+v from %+v", o, info)
			}
			var recs [][]byte
			for i, l := range v.lengths(t) {
				recs = append(recs, codectest.VectorPayload(i, l))
			}
			out, _ := writeLog(t, recs, o)
			marker := info.EOFMarker
			if int64(len(out)) > marker || !bytes.Equal(out, v.data[:len(out)]) || !codec.AllZero(v.data[len(out):marker]) {
				t.Fatalf("writer output (%d bytes) is not pebble's up to its marker at %d (first difference at %d)",
					len(out), marker, logFirstDiff(out, v.data))
			}
		})
	}
	if n < 3 {
		t.Errorf("only %d pebble vectors", n)
	}
}

func logFirstDiff(a, b []byte) int {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	return i
}

// TestLogWriterAppendFlavours appends to recyclable and WAL-sync logs in two
// sessions: the bytes must equal one session's, every chunk must carry the
// log number, and the scan must read every record back.
func TestLogWriterAppendFlavours(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	flavours := []WriterOptions{
		{Recyclable: true, LogNum: 42},
		{WALSync: true, LogNum: 0xdeadbeef},
	}
	for _, fo := range flavours {
		for trial := 0; trial < 40; trial++ {
			recs := appendTrialRecords(rng)
			whole, woffs := writeLog(t, recs, fo)
			cut := rng.IntN(len(recs) + 1)
			a, _ := writeLog(t, recs[:cut], fo)
			_, s := logScanAll(t, a, Options{})
			if err := s.Info().CheckAppend(int64(len(a))); err != nil {
				t.Fatalf("CheckAppend on a clean log: %v", err)
			}
			o := fo
			if cut > 0 {
				o = s.Info().AppendOptions(int64(len(a))) // learnt from the file, as index does
			}
			if out := appendSession(t, a, o, recs, cut, woffs); !bytes.Equal(out, whole) {
				t.Fatalf("%+v trial %d: two sessions (cut %d) differ from one at %d", fo, trial, cut, logFirstDiff(out, whole))
			}
			got, s := logScanAll(t, whole, Options{Strict: true})
			info := s.Info()
			if s.Err() != nil || len(got) != len(recs) || info.LogNum != fo.LogNum || info.WALSync != fo.WALSync || info.Recyclable != fo.Recyclable {
				t.Fatalf("%+v: scan %d of %d records, err %v, info %+v", fo, len(got), len(recs), s.Err(), info)
			}
			for i, r := range got {
				if !bytes.Equal(logReadWhole(t, whole, r), recs[i]) {
					t.Fatalf("%+v: record %d differs", fo, i)
				}
			}
		}
	}
}

// TestLogWriterRecyclableLayout pins the recyclable header bytes and the
// 11-byte block tail rules of spec 8.1: a zero-length FIRST when exactly 11
// bytes are left, zero fill when fewer are.
func TestLogWriterRecyclableLayout(t *testing.T) {
	t.Parallel()
	o := WriterOptions{Recyclable: true, LogNum: 7}
	// Exactly 11 bytes left: a zero-length FIRST, the data in the next block.
	b, offs := writeLog(t, [][]byte{codectest.VectorPayload(0, 32768-11-11), codectest.VectorPayload(1, 5)}, o)
	if offs[1] != 32768-11 || b[32768-11+6] != 6 || binary.LittleEndian.Uint16(b[32768-11+4:]) != 0 ||
		b[32768+6] != 8 || binary.LittleEndian.Uint32(b[32768+7:]) != 7 || len(b) != 32768+11+5 {
		t.Fatalf("11 bytes left: offsets %v, %d bytes", offs, len(b))
	}
	// 10 bytes left: zero-filled, the next record starts the next block.
	b, offs = writeLog(t, [][]byte{codectest.VectorPayload(0, 32768-11-10), codectest.VectorPayload(1, 5)}, o)
	if offs[1] != 32768 || !codec.AllZero(b[32768-10:32768]) || b[32768+6] != 5 {
		t.Fatalf("10 bytes left: offsets %v", offs)
	}
	// The header: masked CRC-32C over type, log number and payload.
	b, _ = writeLog(t, [][]byte{[]byte("abc")}, o)
	want := []byte{0, 0, 0, 0, 3, 0, 5, 7, 0, 0, 0, 'a', 'b', 'c'}
	binary.LittleEndian.PutUint32(want, codec.MaskCRC(codec.CRC32C(want[6:])))
	if !bytes.Equal(b, want) {
		t.Fatalf("FULL \"abc\" of log 7: % x, want % x", b, want)
	}
}

// TestLogCheckAppend: a log its writer closed, or one that ends before a
// recycled file's stale data, cannot take records at its end; both reasons
// are codec.ErrSealed, which the file system maps without naming leveldb.
func TestLogCheckAppend(t *testing.T) {
	t.Parallel()
	base := readLogVector(t, "pebble-recyclable.log") // end marker at 106373
	stale := bytes.Clone(base[:106373])
	binary.LittleEndian.PutUint32(stale[98325+7:], 6) // an intact chunk of log 6: the file's previous life
	logReseal(stale, 98325)
	legacy, _ := writeLog(t, [][]byte{[]byte("x")}, WriterOptions{})
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"pebble-closed", base, ErrClosedLog},
		{"marker-only", []byte{0, 0, 0, 0, 0, 0, 5, 8, 0, 0, 0}, ErrClosedLog},
		{"pebble-open", base[:106373], nil},
		{"stale-tail", stale, ErrRecycledTail},
		{"legacy", legacy, nil},
		{"empty", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, s := logScanAll(t, c.data, Options{})
			err := s.Info().CheckAppend(int64(len(c.data)))
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("CheckAppend = %v, want %v", err, c.want)
			}
			if sealed := errors.Is(err, codec.ErrSealed); sealed != (c.want != nil) {
				t.Fatalf("errors.Is(%v, codec.ErrSealed) = %v, want %v", err, sealed, c.want != nil)
			}
		})
	}
}
