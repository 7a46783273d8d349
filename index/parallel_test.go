package index

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
)

// genLog writes n records of random sizes (seeded) and returns the file and
// the records.
func genLog(t testing.TB, seed uint64, n int, maxLen int) ([]byte, [][]byte) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	var recs [][]byte
	for i := range n {
		l := rng.IntN(maxLen)
		switch i % 97 {
		case 13:
			l = 32768*2 + rng.IntN(32768) // multi-block records straddle part edges
		case 41:
			l = 0
		}
		p := make([]byte, l)
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		if _, err := w.WriteRecord(p); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, p)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), recs
}

// TestParallelMatchesSequential builds tables for clean and damaged logs
// with one part and with many parts cut at every kind of place, and
// requires identical tables: same records, same damage.
func TestParallelMatchesSequential(t *testing.T) {
	old := minPartBytes
	defer func() { minPartBytes = old }()
	minPartBytes = 32768
	data, _ := genLog(t, 7, 3000, 2000)
	cases := map[string][]byte{"clean": data}
	for _, c := range []struct {
		name string
		at   int64
	}{{"flip-start-of-block", 5 * 32768}, {"flip-mid", 200123}, {"flip-part-edge", 8*32768 + 3}, {"flip-late", int64(len(data)) - 40000}} {
		d := bytes.Clone(data)
		d[c.at] ^= 0x55
		cases[c.name] = d
	}
	zeroed := bytes.Clone(data)
	clear(zeroed[12*32768 : 13*32768])
	cases["zero-block"] = zeroed
	cases["truncated"] = data[:len(data)-12345]
	for name, d := range cases {
		t.Run(name, func(t *testing.T) {
			seq, err := Build(context.Background(), bytes.NewReader(d), int64(len(d)), Options{Parallel: 1})
			if err != nil {
				t.Fatal(err)
			}
			if name != "clean" && len(seq.Damage()) == 0 {
				t.Fatalf("damage not reported")
			}
			for _, p := range []int{2, 3, 7, 16} {
				par, err := Build(context.Background(), bytes.NewReader(d), int64(len(d)), Options{Parallel: p})
				if err != nil {
					t.Fatal(err)
				}
				if !sameTable(seq.s(), par.s()) {
					t.Fatalf("parallel=%d: table differs from the sequential build\nseq damage %v\npar damage %v\nseq n=%d par n=%d",
						p, seq.Damage(), par.Damage(), seq.Len(), par.Len())
				}
			}
		})
	}
}

// TestSurvivorsExact checks that, after damage, every surviving record's
// bytes are exactly what was written, in order.
func TestSurvivorsExact(t *testing.T) {
	data, recs := genLog(t, 11, 800, 3000)
	d := bytes.Clone(data)
	d[100000] ^= 1
	tb, err := Build(context.Background(), bytes.NewReader(d), int64(len(d)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Len() >= int64(len(recs)) || tb.Len() < int64(len(recs))-40 {
		t.Fatalf("%d of %d records survived one flipped byte", tb.Len(), len(recs))
	}
	j := 0
	for n := range tb.Len() {
		got := readRecord(t, tb, n)
		for j < len(recs) && !bytes.Equal(recs[j], got) {
			j++
		}
		if j == len(recs) {
			t.Fatalf("survivor %d (%d bytes) matches no written record in order", n, len(got))
		}
		j++
	}
	dm := tb.Damage()
	if len(dm) == 0 || dm[0].Off > 100000 || dm[0].Off+dm[0].Len <= 100000 && len(dm) == 1 {
		t.Fatalf("damage %v does not cover offset 100000", dm)
	}
}

// TestParallelOrphansAcrossParts puts runs of orphan chunks (a record whose
// FIRST chunk is destroyed) right across part edges: the parallel build must
// still report exactly what a sequential scan does, joined ranges included.
func TestParallelOrphansAcrossParts(t *testing.T) {
	old := minPartBytes
	defer func() { minPartBytes = old }()
	minPartBytes = 32768
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	var offs []int64
	for i := range 40 {
		off, _ := w.WriteRecord(bytes.Repeat([]byte{byte(i)}, 5*32768+100))
		offs = append(offs, off)
	}
	w.Close()
	d := buf.Bytes()
	for i := 3; i < 37; i += 5 {
		d[offs[i]+8] ^= 0xff // break the record's FIRST chunk: its MIDDLEs become orphans
	}
	seq, err := Build(context.Background(), bytes.NewReader(d), int64(len(d)), Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{2, 5, 9, 23} {
		par, err := Build(context.Background(), bytes.NewReader(d), int64(len(d)), Options{Parallel: p})
		if err != nil {
			t.Fatal(err)
		}
		if !sameTable(seq.s(), par.s()) {
			t.Fatalf("parallel=%d differs:\nseq %v\npar %v", p, seq.Damage(), par.Damage())
		}
	}
}
