package index

// A toy third format added the way every format is: its framing (here in
// the test, where a real format has its codec package), its driver and
// table (the rest of this file, where a real format has driver_<name>.go),
// and one line in the formats table (addToyFormat).

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec"
)

// --- the "codec package": framing over io.Writer / io.ReaderAt.

// toyFormat is the toy format's codec.Format value.
const toyFormat codec.Format = 200

// toyMagic starts every toy file; each record is then a 4-byte big-endian
// length and the payload.
var toyMagic = []byte("TOY1")

// toyWrite frames recs.
func toyWrite(w io.Writer, recs [][]byte) error {
	b := append([]byte(nil), toyMagic...)
	for _, r := range recs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(r)))
		b = append(b, r...)
	}
	_, err := w.Write(b)
	return err
}

// toyScan returns the payload offset and length of every record.
func toyScan(r io.ReaderAt, size int64) (offs, lens []int64, err error) {
	for off := int64(len(toyMagic)); off < size; {
		var h [4]byte
		if _, err := r.ReadAt(h[:], off); err != nil {
			return nil, nil, fmt.Errorf("%w: toy record header at %d", codec.ErrTruncated, off)
		}
		n := int64(binary.BigEndian.Uint32(h[:]))
		if off+4+n > size {
			return nil, nil, fmt.Errorf("%w: toy record at %d", codec.ErrTruncated, off)
		}
		offs, lens = append(offs, off+4), append(lens, n)
		off += 4 + n
	}
	return offs, lens, nil
}

// --- the driver file.

type toyDriver struct{}

func (toyDriver) probe(r io.ReaderAt, size int64, head []byte) (bool, error) {
	return bytes.HasPrefix(head, toyMagic), nil
}

func (toyDriver) build(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (*snapshot, error) {
	offs, lens, err := toyScan(r, size)
	if err != nil {
		return nil, err
	}
	s := &snapshot{format: f, flavor: "toy", size: size, n: int64(len(offs)), tab: &toyTable{offs, lens}}
	for _, l := range lens {
		s.bytes += l
	}
	return s, nil
}

func (toyDriver) decode(d *decoder, f codec.Format, n int64) table {
	t := &toyTable{}
	for range n {
		t.offs, t.lens = append(t.offs, d.i64()), append(t.lens, d.i64())
	}
	return t
}

type toyTable struct{ offs, lens []int64 }

func (t *toyTable) size(k int64) int64   { return t.lens[k] }
func (t *toyTable) offset(k int64) int64 { return t.offs[k] - 4 }
func (t *toyTable) readAt(tb *Table, s *snapshot, k int64, p []byte, off int64) (int, error) {
	return tb.src(s).ReadAt(p, t.offs[k]+off)
}
func (t *toyTable) samePrefix(old table, n int64) bool {
	o, ok := old.(*toyTable)
	return ok && int64(len(o.offs)) >= n && int64(len(t.offs)) >= n
}
func (t *toyTable) encode(e *encoder) {
	for i := range t.offs {
		e.i64(t.offs[i])
		e.i64(t.lens[i])
	}
}
func (t *toyTable) check(s *snapshot) error {
	if int64(len(t.offs)) != s.n {
		return errBadCache
	}
	return nil
}

// proveFrom scans the whole file (the toy scan has no other start) and
// yields its records from the first.
func (t *toyTable) proveFrom(src io.ReaderAt, s *snapshot, k int64, o Options) (provingScan, int64, error) {
	offs, lens, err := toyScan(src, s.size)
	return &toyProof{t: t, offs: offs, lens: lens, i: -1}, 0, err
}

// toyProof proves a toy table's records.
type toyProof struct {
	t          *toyTable
	offs, lens []int64
	i          int
}

func (p *toyProof) next() bool      { p.i++; return p.i < len(p.offs) }
func (p *toyProof) is(k int64) bool { return p.t.offs[k] == p.offs[p.i] && p.t.lens[k] == p.lens[p.i] }
func (p *toyProof) at() int64       { return p.offs[p.i] - 4 }
func (p *toyProof) err() error      { return nil }
func (p *toyProof) close()          {}

// --- the table line.

// addToyFormat adds the toy format's line to the formats table for the
// duration of the test.
func addToyFormat(t *testing.T) {
	saved := formats
	formats = append(formats[:len(formats):len(formats)], struct {
		format codec.Format
		driver driver
	}{toyFormat, toyDriver{}})
	t.Cleanup(func() { formats = saved })
}

// TestToyFormat: a format added through the table alone is detected,
// built, read, saved and loaded from the cache like the real ones, and
// gets the capabilities it does not implement refused (no append).
func TestToyFormat(t *testing.T) {
	recs := [][]byte{[]byte("one"), {}, bytes.Repeat([]byte("x"), 5000)}
	path := filepath.Join(t.TempDir(), "a.toy")
	var buf bytes.Buffer
	if err := toyWrite(&buf, recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Detect(bytes.NewReader(buf.Bytes()), int64(buf.Len())); !errors.Is(err, codec.ErrFormat) {
		t.Fatalf("Detect before the table line: %v, want ErrFormat", err)
	}
	addToyFormat(t)
	if f, err := Detect(bytes.NewReader(buf.Bytes()), int64(buf.Len())); f != toyFormat || err != nil {
		t.Fatalf("Detect = %v, %v; want the toy format", f, err)
	}
	cache := t.TempDir()
	for _, want := range []string{"built", "cached"} {
		tb, err := Open(context.Background(), path, Options{CacheDir: cache, Writable: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := tb.Info().Loaded; got != want || tb.Format() != toyFormat || tb.Len() != int64(len(recs)) {
			t.Fatalf("open: source %q format %v len %d; want %q, toy, %d", got, tb.Format(), tb.Len(), want, len(recs))
		}
		for i, r := range recs {
			p := make([]byte, len(r))
			if n, err := tb.ReadAt(int64(i), p, 0); n != len(r) || (err != nil && err != io.EOF) || !bytes.Equal(p, r) {
				t.Fatalf("record %d: %q, %v", i, p[:n], err)
			}
		}
		if _, err := tb.Append(context.Background(), [][]byte{[]byte("no")}, AppendOptions{}); !errors.Is(err, ErrReadOnlyFormat) {
			t.Fatalf("append to a format without an appender: %v, want ErrReadOnlyFormat", err)
		}
		tb.Close()
	}
	if _, err := Build(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len()), Options{Format: toyFormat + 1}); !errors.Is(err, codec.ErrUnsupported) {
		t.Fatalf("a format with no table line: %v, want ErrUnsupported", err)
	}
}
