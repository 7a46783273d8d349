package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/index"
)

// walLife is one life of a WAL file in a running pebble database: the log
// number pebble gave it, the bytes the file held when pebble took it
// (another log's, when pebble recycled the file; none when it created it),
// and the bytes pebble's writer wrote into it, in order, from offset 0.
type walLife struct {
	name    string
	num     uint64
	old     []byte
	written []byte
	writes  []int // end offset of each Write call
	torn    bool  // pebble wrote other than by appending (the image model fails)
}

// image is the file as a crash leaves it after the first n bytes of the
// life's writes reached it: those bytes over the file's previous content.
func (l *walLife) image(n int) []byte {
	img := bytes.Clone(l.written[:n])
	if len(l.old) > n {
		img = append(img, l.old[n:]...)
	}
	return img
}

// held is how many of the life's written bytes the image of a crash after
// the first n holds in place: n, and on for as long as the previous life's
// bytes there happen to equal the written ones (a value's text ending where
// an older value's did), since that image is byte for byte the crash at
// the later point and a reader cannot tell them apart.
func (l *walLife) held(n int) int {
	for n < len(l.written) && n < len(l.old) && l.old[n] == l.written[n] {
		n++
	}
	return n
}

// walTap is a vfs.FS that records every WAL life: what a file held before
// pebble reused it for a new log (ReuseForWrite), and what pebble wrote.
type walTap struct {
	vfs.FS
	mu    sync.Mutex
	lives []*walLife
}

// Create taps a new WAL file: a life with no previous content.
func (fs *walTap) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, cat)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return fs.tap(f, name, nil)
}

// ReuseForWrite taps a recycled WAL file: a life over the old log's bytes,
// read before pebble renames the file and writes over them.
func (fs *walTap) ReuseForWrite(oldname, newname string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	r, err := fs.FS.Open(oldname)
	if err != nil {
		return nil, err
	}
	prev, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return nil, err
	}
	f, err := fs.FS.ReuseForWrite(oldname, newname, cat)
	if err != nil {
		return f, err
	}
	return fs.tap(f, newname, prev)
}

// tap starts a life of the WAL file name, open as f.
func (fs *walTap) tap(f vfs.File, name string, old []byte) (vfs.File, error) {
	num, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(name), ".log"), 10, 64)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("WAL name %q: %v", name, err)
	}
	l := &walLife{name: name, num: num, old: old}
	fs.mu.Lock()
	fs.lives = append(fs.lives, l)
	fs.mu.Unlock()
	return &tapFile{File: f, fs: fs, l: l}, nil
}

// tapFile records the writes of one WAL life.
type tapFile struct {
	vfs.File
	fs *walTap
	l  *walLife
}

// Write records p (what of it the file took) as the life's next bytes.
func (f *tapFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.fs.mu.Lock()
	f.l.written = append(f.l.written, p[:n]...)
	f.l.writes = append(f.l.writes, len(f.l.written))
	f.fs.mu.Unlock()
	return n, err
}

// WriteAt marks the life torn: the crash images assume that pebble's WAL
// writer only appends.
func (f *tapFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	f.l.torn = true
	f.fs.mu.Unlock()
	return f.File.WriteAt(p, off)
}

// quietLogger keeps pebble's informational lines out of the test output.
type quietLogger struct{ t testing.TB }

func (quietLogger) Infof(string, ...any)        {}
func (l quietLogger) Errorf(f string, a ...any) { l.t.Logf("pebble: "+f, a...) }
func (quietLogger) Fatalf(f string, a ...any)   { panic(fmt.Sprintf("pebble: "+f, a...)) }

// runRecyclingPebble runs a pebble database on a tapped in-memory FS and
// returns the lives of its WAL files. Each life holds batches of a size
// drawn from rng (small, several blocks, records of many chunks) and ends
// with a manual flush, which rotates the WAL: the flushed log becomes
// obsolete and pebble recycles its file for a later log (pebble recycles
// WALs always; MemTableSize is large so that only the flushes rotate, and
// the lives follow from the seed). walSync writes the WAL-sync chunk
// format (19-byte headers), else the recyclable one (11 bytes).
func runRecyclingPebble(t *testing.T, rng *rand.Rand, walSync bool) []*walLife {
	t.Helper()
	fs := &walTap{FS: vfs.NewMem()}
	fmv := pebble.FormatMinSupported
	if walSync {
		fmv = pebble.FormatNewest
	}
	db, err := pebble.Open("db", &pebble.Options{FS: fs, FormatMajorVersion: fmv, MemTableSize: 32 << 20,
		DisableAutomaticCompactions: true, Logger: quietLogger{t}})
	if err != nil {
		t.Fatal(err)
	}
	for life := range 9 {
		// Old lives both longer and shorter than the new ones.
		target := []int{0, 6 << 10, 40 << 10, 110 << 10, 260 << 10}[rng.Intn(5)]
		for n, k := 0, 0; n < target || k == 0; k++ {
			b := db.NewBatch()
			for j := rng.Intn(4); j >= 0; j-- {
				var v []byte
				switch r := rng.Intn(20); {
				case r < 13:
					v = randValue(rng)
				case r < 18:
					v = randPayload(rng, 1+rng.Intn(8<<10))
				default:
					v = randPayload(rng, 20<<10+rng.Intn(70<<10))
				}
				key := randKey(rng, life*10000+k*10+j)
				if err := b.Set(key, v, nil); err != nil {
					t.Fatal(err)
				}
				n += len(key) + len(v)
			}
			opt := pebble.NoSync
			if rng.Intn(3) == 0 {
				opt = pebble.Sync
			}
			if err := db.Apply(b, opt); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The WAL files pebble left are their last lives' images, whole: the
	// tap saw every byte.
	for _, l := range fs.lives {
		f, err := fs.FS.Open(l.name)
		if err != nil {
			continue // recycled again, or deleted
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil || !bytes.Equal(b, l.image(len(l.written))) {
			t.Fatalf("%s: %d bytes (%v), not the %d written over %d", l.name, len(b), err, len(l.written), len(l.old))
		}
	}
	return fs.lives
}

// walChunk is a chunk header pebble's writer wrote: offset, header size,
// payload length, chunk type.
type walChunk struct {
	off    int
	hs, ln int
	typ    byte
}

// endsRecord reports whether c is the last chunk of a record: a full chunk
// (not the empty one Close writes as the log's end marker) or a last one,
// in the legacy, recyclable and WAL-sync formats.
func (c walChunk) endsRecord() bool {
	switch c.typ {
	case 1, 5, 9: // full
		return c.ln > 0
	case 4, 8, 12: // last
		return true
	}
	return false
}

// replayed is how many of a life's records an image holding its first n
// written bytes (see held) leaves whole: those whose every chunk is in it.
// What follows them (a cut chunk, the previous life's bytes, of a lower
// log number) ends the log, so these are exactly what a replay yields.
func replayed(cs []walChunk, n int) int {
	k := 0
	for _, c := range cs {
		if c.off+c.hs+c.ln > n {
			break
		}
		if c.endsRecord() {
			k++
		}
	}
	return k
}

// walChunks lists the chunks of a log written from offset 0 (a writer's
// own bytes: blocks end in zero padding or fewer bytes than a header).
func walChunks(b []byte) []walChunk {
	var cs []walChunk
	for blk := 0; blk < len(b); blk += logBlock {
		end := min(blk+logBlock, len(b))
		for p := blk; p+logHeader <= end; {
			typ := b[p+6]
			hs := map[bool]int{true: 11, false: 7}[typ >= 5]
			if typ >= 9 {
				hs = 19
			}
			if typ == 0 || p+hs > end {
				break
			}
			ln := int(binary.LittleEndian.Uint16(b[p+4:]))
			cs = append(cs, walChunk{p, hs, ln, typ})
			p += hs + ln
		}
	}
	return cs
}

// crashPoints draws the byte counts of a life's writes that a crash lets
// reach the file: none, all, write boundaries, cuts inside the first chunk
// (its header, its payload), inside and at the end of other chunks, around
// block boundaries, and anywhere; in that order, without repeats.
func crashPoints(rng *rand.Rand, l *walLife) []int {
	w := len(l.written)
	ps := []int{0, w}
	if len(l.writes) > 1 {
		ps = append(ps, l.writes[len(l.writes)-2]) // before the end-of-log marker Close wrote
	}
	for range 4 {
		ps = append(ps, l.writes[rng.Intn(len(l.writes))])
	}
	cs := walChunks(l.written)
	inside := func(c walChunk) {
		ps = append(ps, c.off+1+rng.Intn(c.hs-1), c.off+c.hs+c.ln, c.off+c.hs+rng.Intn(c.ln+1))
	}
	if len(cs) > 0 {
		c := cs[0]
		ps = append(ps, 1, 6, 7, 10, c.hs-1, c.hs, c.hs+c.ln-1)
		inside(c)
	}
	for range min(len(cs), 5) {
		inside(cs[rng.Intn(len(cs))])
	}
	for range 2 {
		if k := w / logBlock; k > 0 {
			at := (1 + rng.Intn(k)) * logBlock
			ps = append(ps, at, at+1, at+logHeader, at+11, at+19, at-1)
		}
	}
	for range 4 {
		ps = append(ps, rng.Intn(w+1))
	}
	seen := map[int]bool{}
	out := ps[:0]
	for _, p := range ps {
		if p = min(max(p, 0), w); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// flipCost estimates what pebble's reader spends on a crash image of l cut
// at n, in reads of a whole-block chunk: a chunk whose header (its log
// number at least) is the live log's but whose payload is cut fails its
// checksum, and pebble then looks for a bit flip, recomputing the checksum
// for each bit of the chunk (about 0.3 s for a 32 KiB chunk).
func flipCost(l *walLife, n int) float64 {
	for _, c := range walChunks(l.written) {
		if c.off+11 <= n && n < c.off+c.hs+c.ln {
			f := float64(c.hs-6+c.ln) / logBlock
			return f * f
		}
	}
	return 0
}

// pebbleFlipBudget bounds the flipCost of a seed's crash images.
const pebbleFlipBudget = 12

// readPebbleWAL returns the records pebble's WAL reader, given the log's
// number, yields from b before it stops: at the log's end, or at a chunk
// that is invalid, zeroed or of another log, which pebble's recovery takes
// as the end of the log.
func readPebbleWAL(b []byte, num uint64) ([][]byte, error) {
	recs, err := readAll("pebble", newPebbleReader(record.NewReader, bytes.NewReader(b), num).Next)
	if err == nil || errors.Is(err, record.ErrInvalidChunk) || errors.Is(err, record.ErrZeroedChunk) ||
		errors.Is(err, record.ErrUnexpectedEOF) {
		return recs, nil
	}
	return recs, err
}

// TestPebbleRecycledWALCrash runs pebble with WAL recycling and crashes
// each WAL life at many points: the file then holds the first bytes of the
// live log over its previous lives. recfs, told the log's number by the
// file's name as pebble names it, must read exactly the records pebble's
// reader yields for the same bytes, never a record of a previous life;
// the index, opening the file by that name, must agree. Both readers must
// replay exactly the records whose chunks all are in the image (images
// whose cut chunk would cost pebble's reader too much are read by recfs
// alone, against that).
func TestPebbleRecycledWALCrash(t *testing.T) {
	images, reused, skipped := 0, 0, 0
	for i, seed := range testSeeds(t, 2) {
		rng := rand.New(rand.NewSource(seed))
		budget := float64(pebbleFlipBudget)
		lives := runRecyclingPebble(t, rng, i%2 == 1)
		// Every record each log number ever wrote, to name a previous life,
		// and each life's records, in order.
		wrote := map[string]uint64{}
		all := map[*walLife][][]byte{}
		for _, l := range lives {
			recs, err := readPebbleWAL(l.written, l.num)
			if err != nil {
				t.Fatalf("seed %d: %s: pebble: %v", seed, l.name, err)
			}
			if k := replayed(walChunks(l.written), len(l.written)); k != len(recs) {
				t.Fatalf("seed %d: %s: %d records end in the chunks written, pebble reads %d", seed, l.name, k, len(recs))
			}
			for _, r := range recs {
				wrote[string(r)] = l.num
			}
			all[l] = recs
		}
		for _, l := range lives {
			if l.torn {
				t.Fatalf("seed %d: pebble wrote %s out of order", seed, l.name)
			}
			if l.old != nil {
				reused++
			}
			cs := walChunks(l.written)
			for k, n := range crashPoints(rng, l) {
				img := l.image(n)
				where := fmt.Sprintf("seed %d (walSync %v): %s (log %d, %d bytes written, %d before) crashed at %d",
					seed, i%2 == 1, filepath.Base(l.name), l.num, len(l.written), len(l.old), n)
				// The replay a crash at n must give: the records whose
				// chunks all are in the image, no fewer, no more.
				exact := all[l][:replayed(cs, l.held(n))]
				if c := flipCost(l, n); c > 0.01 {
					if c > budget {
						// Too dear for pebble's reader: recfs alone.
						skipped++
						got := recfsReadLogWith(img, nil, leveldb.Options{LogNum: uint32(l.num)})
						if d := diffRecords(exact, got.Recs); got.Err != nil || d != "" {
							t.Errorf("%s: recfs vs the records written: %s (%v, damage %v)", where, d, got.Err, got.Damage)
						}
						continue
					}
					budget -= c
				}
				images++
				want, err := readPebbleWAL(img, l.num)
				if err != nil {
					t.Fatalf("%s: pebble: %v", where, err)
				}
				if d := diffRecords(exact, want); d != "" {
					t.Errorf("%s: pebble vs the records written: %s", where, d)
				}
				got := recfsReadLogWith(img, nil, leveldb.Options{LogNum: uint32(l.num)})
				if got.Err != nil {
					t.Fatalf("%s: recfs: %v", where, got.Err)
				}
				for j, r := range got.Recs {
					if num := wrote[string(r)]; num != l.num {
						t.Errorf("%s: recfs record %d at %d is log %d's", where, j, got.Locs[j].Off, num)
						break
					}
				}
				if d := diffRecords(want, got.Recs); d != "" {
					t.Errorf("%s: recfs vs pebble: %s (damage %v)", where, d, got.Damage)
					continue
				}
				if n := len(got.Locs); n > 0 {
					for _, d := range got.Damage {
						if d.Off < got.Locs[n-1].Off {
							t.Errorf("%s: damage %v before the last record at %d", where, d, got.Locs[n-1].Off)
						}
					}
				}
				if k%4 == 0 {
					checkIndexByName(t, where, filepath.Base(l.name), img, want)
				}
			}
		}
	}
	if reused == 0 {
		t.Fatal("pebble reused no WAL file")
	}
	t.Logf("%d crash images of %d reused WAL lives (and %d cut inside big chunks read by recfs alone)", images, reused, skipped)
}

// checkIndexByName opens img through the index under pebble's name for it
// and compares the records with want. The format is given: a crash early
// in a log leaves too few bytes to detect it by.
func checkIndexByName(t *testing.T, where, name string, img []byte, want [][]byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := index.Open(context.Background(), path, index.Options{Format: codec.LevelDB, CacheDir: "-"})
	if err != nil {
		t.Fatalf("%s: index: %v", where, err)
	}
	defer tb.Close()
	var got [][]byte
	for n := range tb.Len() {
		r, err := tb.Open(n)
		if err != nil {
			t.Fatalf("%s: index record %d: %v", where, n, err)
		}
		p := make([]byte, r.Size())
		if _, err := r.ReadAt(p, 0); err != nil && err != io.EOF {
			t.Fatalf("%s: index record %d: %v", where, n, err)
		}
		got = append(got, p)
	}
	if d := diffRecords(want, got); d != "" {
		t.Errorf("%s: index vs pebble: %s (damage %v)", where, d, tb.Damage())
	}
}
