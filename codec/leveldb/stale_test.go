package leveldb

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// logRecycledFile lays out FULL recyclable chunks of log num carrying
// payloads of the given sizes as pebble's Writer does: a block whose
// room drops below 11 bytes is zero-filled. It returns the bytes and the end
// of each chunk.
func logRecycledFile(num uint32, seed int, sizes []int) ([]byte, []int64) {
	var b []byte
	var ends []int64
	for i, n := range sizes {
		if room := logBlockSize - len(b)%logBlockSize; room < logHdrRecycle+n {
			b = append(b, make([]byte, room)...)
		}
		b = append(b, logRecycledChunk(5, num, codectest.VectorPayload(seed+i, n))...)
		ends = append(ends, int64(len(b)))
		if room := logBlockSize - len(b)%logBlockSize; room < logHdrRecycle {
			b = append(b, make([]byte, room)...)
		}
	}
	return b, ends
}

// overwrite returns old with live written over its start, as a writer
// reusing a recycled file leaves it.
func overwrite(old, live []byte) []byte {
	b := bytes.Clone(old)
	copy(b, live)
	return b
}

// TestLogStaleTail checks how the end of a recycled log is reported: the
// bytes of the file's previous life after the live log, including the
// unparsable remains of the old chunk the live log ended in, are one Damage
// of kind ErrStale (not corruption, also not in strict mode); damage with
// live chunks after it stays damage.
func TestLogStaleTail(t *testing.T) {
	t.Parallel()
	old, oldEnds := logRecycledFile(6, 100, []int{5000, 9000, 20000, 3000, 30000, 30000, 1000})
	live, liveEnds := logRecycledFile(7, 0, []int{300, 400})
	liveFirst := logRecycledChunk(6, 7, codectest.VectorPayload(9, 50)) // a FIRST whose rest never came
	type dmg struct {
		off, len int64
		reason   string
		err      error
	}
	type staleCase struct {
		name     string
		data     []byte
		nrec     int
		damage   []dmg
		end      int64 // Info().End
		strictAt int64 // where a strict scan fails; -1: it reads cleanly
	}
	size := int64(len(old))
	// aligned: log 7 overwrote exactly the first two old chunks; the old
	// log's zero fill after them is padding, the stale tail starts with
	// the old chunk at the next block.
	aligned, _ := logRecycledFile(7, 0, []int{5000, 9000})
	// Damage in the live log, with live chunks after it, stays damage.
	mid := overwrite(old, live)
	blk1, _ := logRecycledFile(7, 50, []int{32768 - 11 - 100, 90})
	copy(mid[32768:], blk1[:32768])
	oldMarked, _ := logRecycledFile(5, 300, []int{5000})
	oldMarked = append(oldMarked, 0, 0, 0, 0, 0, 0, 5, 6, 0, 0, 0)
	torn := liveEnds[1] + int64(len(liveFirst))
	cases := []staleCase{
		{"aligned", overwrite(old, aligned), 2, []dmg{{32768, size - 32768, logReasonStale, codec.ErrStale}}, 32768, -1},
		// Strict scans stop at the first unparsable bytes: they cannot know
		// yet that stale data follows them.
		{"inside-an-old-chunk", overwrite(old, live), 2,
			[]dmg{{liveEnds[1], size - liveEnds[1], logReasonStale, codec.ErrStale}}, liveEnds[1], liveEnds[1]},
		{"torn-last-record", overwrite(old, append(bytes.Clone(live), liveFirst...)), 2, []dmg{
			{liveEnds[1], int64(len(liveFirst)), logReasonCutShort, codec.ErrTruncated},
			{torn, size - torn, logReasonStale, codec.ErrStale}}, torn, liveEnds[1]},
		// The old log ended in the same block: no block start shows a stale
		// chunk, but an intact old chunk inside the remains proves them.
		{"same-last-block", overwrite(old[:oldEnds[1]], live), 2,
			[]dmg{{liveEnds[1], oldEnds[1] - liveEnds[1], logReasonStale, codec.ErrStale}}, liveEnds[1], liveEnds[1]},
		// Only the old log's end marker (pebble's, for log 5+1) is left
		// after the live log: proof enough.
		{"old-end-marker", overwrite(oldMarked, live), 2,
			[]dmg{{liveEnds[1], int64(len(oldMarked)) - liveEnds[1], logReasonStale, codec.ErrStale}}, liveEnds[1], liveEnds[1]},
		// The live log ends exactly where the old log's end marker begins
		// (found by TestPebbleRecycledWAL's seed 1795411331570765353).
		{"old-end-marker-right-after", append(bytes.Clone(live), 0, 0, 0, 0, 0, 0, 5, 6, 0, 0, 0), 2,
			[]dmg{{liveEnds[1], 11, logReasonStale, codec.ErrStale}}, liveEnds[1], liveEnds[1]},
		// Without any intact old chunk after the live log, nothing proves the
		// bytes are stale: they stay damage.
		{"no-stale-chunk-after", overwrite(old[:oldEnds[0]], live), 2,
			[]dmg{{liveEnds[1], oldEnds[0] - liveEnds[1], logReasonTruncChunk, codec.ErrTruncated}}, oldEnds[0], liveEnds[1]},
		{"damage-then-live", mid, 3, []dmg{
			{liveEnds[1], 32768 - liveEnds[1], logReasonChecksum, codec.ErrCorrupt},
			{65536, size - 65536, logReasonStale, codec.ErrStale}}, 65536, liveEnds[1]},
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, strict := range []bool{false, true} {
				got, s := logScanAll(t, c.data, Options{Strict: strict})
				var gd []dmg
				for _, d := range s.Damage() {
					gd = append(gd, dmg{d.Off, d.Len, d.Reason, d.Err})
				}
				if strict {
					var ce *codec.CorruptError
					if c.strictAt < 0 && (s.Err() != nil || len(got) != c.nrec) {
						t.Errorf("strict: %d records, %v", len(got), s.Err())
					}
					if c.strictAt >= 0 && (!errors.As(s.Err(), &ce) || ce.Off != c.strictAt) {
						t.Errorf("strict: %v, want an error at %d", s.Err(), c.strictAt)
					}
					continue
				}
				if len(got) != c.nrec || fmt.Sprint(gd) != fmt.Sprint(c.damage) || s.Info().End != c.end {
					t.Errorf("%d records, damage %v, end %d; want %d, %v, %d", len(got), gd, s.Info().End, c.nrec, c.damage, c.end)
				}
				for _, r := range got {
					logReadWhole(t, c.data, r)
				}
				// Split scans agree (the index merges parts so).
				checkSplitScan(t, c.data, Options{}, got, s.Damage())
			}
		})
	}
}

// TestLogStaleTornFirstChunk checks a recycled file whose live log is one
// write torn inside its first chunk: no intact chunk of the live log is
// left, and the intact chunks after it belong to the file's previous life.
// With the chunk's header intact its log number tells them stale; torn
// inside the header, only the file's name (Options.LogNum) can, as pebble's
// reader is told the number (TestPebbleRecycledWAL's seed
// 1795777963360255314).
func TestLogStaleTornFirstChunk(t *testing.T) {
	t.Parallel()
	old, _ := logRecycledFile(6, 100, []int{5000, 9000, 20000, 3000, 30000, 30000, 1000})
	live, liveEnds := logRecycledFile(7, 0, []int{300})
	small, _ := logRecycledFile(6, 200, []int{5000, 3000}) // the old log ends in block 0
	cases := []struct {
		name  string
		data  []byte
		o     Options
		stale bool // no records: the torn first write, then a stale tail; else the old log's records
	}{
		{"header-intact", overwrite(old, live[:liveEnds[0]-20]), Options{}, true},
		{"header-intact-named", overwrite(old, live[:liveEnds[0]-20]), Options{LogNum: 7}, true},
		{"header-torn", overwrite(old, live[:3]), Options{}, false},
		// No block start after the damage: an intact old chunk inside it,
		// of a lower number, proves it stale (seed 1795779464100269950).
		{"one-block", overwrite(small, live[:liveEnds[0]-20]), Options{}, true},
		{"one-block-header-torn-named", overwrite(small, live[:3]), Options{LogNum: 7}, true},
		{"header-torn-named", overwrite(old, live[:3]), Options{LogNum: 7}, true},
		// A name of a lower number than the chunks' overrules nothing.
		{"header-torn-named-lower", overwrite(old, live[:3]), Options{LogNum: 5}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			size := int64(len(c.data))
			got, s := logScanAll(t, c.data, c.o)
			ds := s.Damage()
			if c.stale {
				if len(got) != 0 || len(ds) != 2 || ds[0].Off != 0 || !errors.Is(ds[0].Err, codec.ErrTruncated) ||
					!ds[1].Stale() || ds[1].Off != ds[0].Len || ds[1].Off+ds[1].Len != size || s.Info().End != ds[1].Off {
					t.Fatalf("%d records, damage %v, end %d; want none, a truncation from 0, a stale tail", len(got), ds, s.Info().End)
				}
			} else if len(got) == 0 || len(ds) == 0 || ds[0].Off != 0 || ds[0].Stale() {
				t.Fatalf("%d records, damage %v; want the old log's records after damage at 0", len(got), ds)
			}
			checkSplitScan(t, c.data, c.o, got, ds)
		})
	}
}

// TestLogClaimLimits checks where a claimed log number stops: a zeroed
// first block gives no header to claim from, but the name still claims, in
// whole and split scans alike; a flipped high bit in the first chunk's
// number claims nothing, so a healthy log stays a log with damage. A name
// claims before intact chunks too: a recycled file that no write of its
// live log reached (pebble renamed it, then crashed) holds only its
// previous life, which pebble's reader, told the name's number, does not
// read (TestPebbleRecycledWALCrash, crashed at 0); a higher number in the
// chunks overrules the name.
func TestLogClaimLimits(t *testing.T) {
	t.Parallel()
	old, _ := logRecycledFile(6, 100, []int{5000, 9000, 20000, 3000, 30000, 30000, 1000})
	// An empty log 6 that pebble closed: its end marker alone.
	marker := []byte{0, 0, 0, 0, 0, 0, 5, 7, 0, 0, 0}
	zeroed := append(make([]byte, 32768), old...)
	healthy, _ := logRecycledFile(7, 300, []int{5000, 9000, 20000, 3000, 30000, 30000, 1000})
	flipped := bytes.Clone(healthy)
	flipped[10] ^= 1 // log 7 + 1<<24
	cases := []struct {
		name  string
		data  []byte
		o     Options
		stale bool // no records and a stale tail; else records and no stale tail
	}{
		{"zeroed-block-0", zeroed, Options{}, false},
		{"zeroed-block-0-named", zeroed, Options{LogNum: 7}, true},
		{"flipped-number", flipped, Options{}, false},
		{"flipped-number-named", flipped, Options{LogNum: 7}, false},
		{"intact-old", old, Options{}, false},
		{"intact-old-named", old, Options{LogNum: 7}, true},
		{"intact-old-named-higher", healthy, Options{LogNum: 5}, false},
		{"old-marker-named", marker, Options{LogNum: 7}, true},
		// A name far above the chunks' numbers is no log number: a copy
		// named by a date or a Unix time, or the highest number.
		{"intact-old-named-gap-edge", old, Options{LogNum: 6 + maxRecycleGap - 1}, true},
		{"intact-old-named-past-gap", old, Options{LogNum: 6 + maxRecycleGap}, false},
		{"intact-old-named-date", old, Options{LogNum: 20261127}, false},
		{"intact-old-named-time", old, Options{LogNum: 1732700000}, false},
		{"intact-old-named-max", old, Options{LogNum: 1<<32 - 1}, false},
		{"zeroed-block-0-named-date", zeroed, Options{LogNum: 20261127}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, s := logScanAll(t, c.data, c.o)
			ds := s.Damage()
			stale := len(ds) > 0 && ds[len(ds)-1].Stale()
			if stale != c.stale || (len(got) == 0) != c.stale {
				t.Errorf("%d records, damage %v", len(got), ds)
			}
			checkSplitScan(t, c.data, c.o, got, ds)
		})
	}
}

// TestLogLegacyTornTailNamed: a legacy log (leveldb, goleveldb) named by
// its number, whose last record a crash tore, keeps its torn tail as
// damage, however the torn payload looks: a name claims nothing for a file
// whose first chunk is an intact legacy one. The payloads here hold what
// would pass as proof of a recycled file's stale tail: an intact
// recyclable chunk of a lower log, or an end marker as the file's last
// bytes.
func TestLogLegacyTornTailNamed(t *testing.T) {
	t.Parallel()
	legacy := func(last []byte, cut int) []byte {
		var buf bytes.Buffer
		w := NewWriter(&buf, WriterOptions{})
		for i := range 4 {
			if _, err := w.WriteRecord(codectest.VectorPayload(i, 9000)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.WriteRecord(last); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()[:buf.Len()-cut]
	}
	pad := codectest.VectorPayload(50, 400)
	inner := logRecycledChunk(5, 3, []byte("user data"))
	marker := []byte{0, 0, 0, 0, 0, 0, 5, 4, 0, 0, 0} // log 3's end marker
	cases := []struct {
		name string
		data []byte
	}{
		{"inner-chunk", legacy(append(append(bytes.Clone(pad), inner...), pad...), 150)},
		{"marker-at-eof", legacy(append(append(bytes.Clone(pad), marker...), pad...), len(pad))},
	}
	for _, c := range cases {
		for _, o := range []Options{{}, {LogNum: 9}} {
			t.Run(fmt.Sprintf("%s/lognum-%d", c.name, o.LogNum), func(t *testing.T) {
				got, s := logScanAll(t, c.data, o)
				ds, in := s.Damage(), s.Info()
				if len(got) != 4 || len(ds) != 1 || ds[0].Stale() || !errors.Is(ds[0].Err, codec.ErrTruncated) || in.Recyclable {
					t.Errorf("%d records, damage %v, info %+v", len(got), ds, in)
				}
				if err := in.CheckAppend(int64(len(c.data))); err != nil {
					t.Errorf("CheckAppend: %v", err)
				}
				sr, sd := logSplitScanWith(t, c.data, []int64{logBlockSize}, o)
				if fmt.Sprint(sr) != fmt.Sprint(got) || fmt.Sprint(sd) != fmt.Sprint(ds) {
					t.Errorf("split scan: %v %v, whole: %v %v", sr, sd, got, ds)
				}
			})
		}
	}
}
