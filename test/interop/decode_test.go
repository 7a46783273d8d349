package interop

// --decode against the databases themselves: WALs and MANIFESTs written by
// goleveldb, pebble and (when its ldb tool is installed) RocksDB decode to
// exactly the operations and files the databases wrote, as their own
// readers (pebble's batchrepr, goleveldb's sstables property, pebble's
// SSTables, ldb dump_wal) see them.

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/journal"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/recfs/recfs/codec/dbdecode"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/index"
)

// dop is one decoded operation: its name and its fields, unescaped.
type dop struct {
	name   string
	fields [][]byte
}

func (o dop) String() string { return fmt.Sprintf("%s %q", o.name, o.fields) }

// decodedBatch is the text of one batch parsed back.
type decodedBatch struct {
	seq, count uint64
	ops        []dop
}

// parseBatchText parses dbdecode's batch text; an error or unknown-tag
// line fails the test.
func parseBatchText(t *testing.T, text []byte) decodedBatch {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	var b decodedBatch
	if _, err := fmt.Sscanf(lines[0], "batch seq %d count %d", &b.seq, &b.count); err != nil {
		t.Fatalf("header %q: %v", lines[0], err)
	}
	for _, l := range lines[1:] {
		name, rest, _ := strings.Cut(l, " ")
		var parts []string
		if n, ok := opArity[name]; !ok {
			parts = strings.Split(rest, " ") // no field of these holds a space
		} else if n > 0 {
			parts = strings.SplitN(rest, " ", n) // the last field may
		}
		o := dop{name: name}
		for _, p := range parts {
			f, err := dbdecode.Unescape(p)
			if err != nil {
				t.Fatalf("field %q of %q: %v", p, l, err)
			}
			o.fields = append(o.fields, f)
		}
		b.ops = append(b.ops, o)
	}
	return b
}

// opArity is the number of fields of the operations whose number is
// fixed: their last field keeps its spaces. range-key-set and -unset
// take any number, and then none does.
var opArity = map[string]int{"put": 2, "delete": 1, "merge": 2, "log-data": 1, "single-delete": 1, "range-delete": 2,
	"range-key-delete": 2, "ingest-sst": 1, "delete-sized": 2, "excise": 2, "put-cf": 3, "delete-cf": 2, "merge-cf": 3,
	"single-delete-cf": 2, "range-delete-cf": 3, "blob-index": 2, "blob-index-cf": 3, "put-entity": 2, "put-entity-cf": 3,
	"begin-prepare": 0, "end-prepare": 1, "commit": 1, "rollback": 1, "noop": 0, "begin-persisted-prepare": 0, "begin-unprepare": 0}

// pebbleKindOp names pebble's batch kinds as dbdecode does.
var pebbleKindOp = map[int]string{0: "delete", 1: "put", 2: "merge", 3: "log-data", 7: "single-delete", 15: "range-delete",
	19: "range-key-delete", 20: "range-key-unset", 21: "range-key-set", 22: "ingest-sst", 23: "delete-sized", 24: "excise"}

// fromBatchrepr lists the operations of repr as pebble's own batch reader
// reads them, in dbdecode's terms: range keys' values are split into end,
// suffixes and values with pebble's encoding; delete-sized's value is a
// varint.
func fromBatchrepr(t *testing.T, repr []byte) decodedBatch {
	t.Helper()
	h, ok := batchrepr.ReadHeader(repr)
	if !ok {
		t.Fatalf("batchrepr: no header in %x", repr)
	}
	b := decodedBatch{seq: uint64(h.SeqNum), count: uint64(h.Count)}
	r := batchrepr.Read(repr)
	for {
		kind, ukey, value, ok, err := r.Next()
		if err != nil {
			t.Fatalf("batchrepr: %v", err)
		}
		if !ok {
			return b
		}
		name, known := pebbleKindOp[int(kind)]
		if !known {
			t.Fatalf("batchrepr: kind %v", kind)
		}
		o := dop{name: name, fields: [][]byte{ukey}}
		switch name {
		case "put", "merge", "range-delete", "range-key-delete", "excise":
			o.fields = append(o.fields, value)
		case "range-key-set", "range-key-unset":
			o.fields = append(o.fields, splitVarstrings(t, value)...)
		case "delete-sized":
			v, n := uvarint(value)
			if n != len(value) {
				t.Fatalf("delete-sized value %x", value)
			}
			o.fields = append(o.fields, []byte(strconv.FormatUint(v, 10)))
		}
		b.ops = append(b.ops, o)
	}
}

func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// splitVarstrings splits a run of varint-length-prefixed strings.
func splitVarstrings(t *testing.T, b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n, k := uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			t.Fatalf("varstrings %x", b)
		}
		out = append(out, b[k:k+int(n)])
		b = b[k+int(n):]
	}
	return out
}

// readJournal reads every record of a leveldb log with goleveldb's reader
// (checksums on, strict).
func readJournal(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := readAll("goleveldb", journal.NewReader(f, nil, true, true).Next)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// newPebbleReader calls record.NewReader with a log number whose type,
// internal to pebble, can only be inferred.
func newPebbleReader[N ~uint64](newReader func(io.Reader, N) *record.Reader, r io.Reader, num uint64) *record.Reader {
	return newReader(r, N(num))
}

// readPebbleLog reads every record of a pebble WAL or MANIFEST with
// pebble's reader (which knows the recyclable chunk format), up to the end
// of the log: io.EOF, or a zeroed or invalid chunk where a record starts.
func readPebbleLog(t *testing.T, path string, num uint64) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := readAll("pebble", newPebbleReader(record.NewReader, f, num).Next)
	if err != nil && err != record.ErrZeroedChunk && err != record.ErrInvalidChunk {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// globOne returns the paths matching pattern in dir, sorted.
func globOne(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(m) == 0 {
		t.Fatalf("no %s in %s (%v)", pattern, dir, err)
	}
	sort.Strings(m)
	return m
}

// randKey returns a key with printable and binary bytes, spaces and
// backslashes, so that escaping is exercised.
func randKey(rng *rand.Rand, i int) []byte {
	k := []byte(fmt.Sprintf("user%05d", i))
	switch rng.Intn(4) {
	case 0:
		k = append(k, ' ', '\\', 0, 0xff)
	case 1:
		k = append(k, byte(rng.Intn(256)))
	}
	return k
}

func randValue(rng *rand.Rand) []byte {
	v := make([]byte, rng.Intn(40))
	for i := range v {
		v[i] = byte(rng.Intn(256))
	}
	if rng.Intn(2) == 0 {
		v = []byte(fmt.Sprintf("value %d \\ text", rng.Intn(1000)))
	}
	return v
}

// checkBatches decodes recs and compares each with pebble's batch reader
// and all of them, in order, with the operations written.
func checkBatches(t *testing.T, recs [][]byte, want []dop, seq0 uint64) {
	t.Helper()
	var got []dop
	seq := seq0
	for i, r := range recs {
		text, err := dbdecode.AppendBatch(nil, r, dbdecode.Options{})
		if err != nil {
			t.Fatalf("record %d: %v\n%s", i, err, text)
		}
		d := parseBatchText(t, text)
		ref := fromBatchrepr(t, r)
		if d.seq != ref.seq || d.count != ref.count || fmt.Sprint(d.ops) != fmt.Sprint(ref.ops) {
			t.Fatalf("record %d: decoded\n%+v\npebble's batch reader\n%+v", i, d, ref)
		}
		if seq0 > 0 && d.seq != seq {
			t.Fatalf("record %d: seq %d, want %d", i, d.seq, seq)
		}
		seq += d.count
		got = append(got, d.ops...)
	}
	if len(got) != len(want) {
		t.Fatalf("%d operations decoded, %d written", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Fatalf("operation %d: decoded %v, written %v", i, got[i], want[i])
		}
	}
}

func TestDecodeGoLevelDBWAL(t *testing.T) {
	for _, seed := range testSeeds(t, 3) {
		rng := rand.New(rand.NewSource(seed))
		dir := t.TempDir()
		db, err := leveldb.OpenFile(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want []dop
		for b := 0; b < 200; b++ {
			var batch leveldb.Batch
			for i := rng.Intn(8); i >= 0; i-- {
				k := randKey(rng, rng.Intn(100000))
				if rng.Intn(4) == 0 {
					batch.Delete(k)
					want = append(want, dop{"delete", [][]byte{k}})
				} else {
					v := randValue(rng)
					batch.Put(k, v)
					want = append(want, dop{"put", [][]byte{k, v}})
				}
			}
			if err := db.Write(&batch, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		var recs [][]byte
		for _, p := range globOne(t, dir, "*.log") {
			recs = append(recs, readJournal(t, p)...)
		}
		checkBatches(t, recs, want, 1)
	}
}

func TestDecodePebbleWAL(t *testing.T) {
	for _, seed := range testSeeds(t, 2) {
		rng := rand.New(rand.NewSource(seed))
		dir := t.TempDir()
		db, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatNewest})
		if err != nil {
			t.Fatal(err)
		}
		var want []dop
		for b := 0; b < 150; b++ {
			batch := db.NewBatch()
			for i := rng.Intn(8); i >= 0; i-- {
				k, k2 := randKey(rng, rng.Intn(1000)), randKey(rng, 1000+rng.Intn(1000))
				v := randValue(rng)
				var err error
				switch rng.Intn(10) {
				case 0:
					err = batch.Delete(k, nil)
					want = append(want, dop{"delete", [][]byte{k}})
				case 1:
					err = batch.Merge(k, v, nil)
					want = append(want, dop{"merge", [][]byte{k, v}})
				case 2:
					err = batch.SingleDelete(k, nil)
					want = append(want, dop{"single-delete", [][]byte{k}})
				case 3:
					err = batch.DeleteRange(k, k2, nil)
					want = append(want, dop{"range-delete", [][]byte{k, k2}})
				case 4:
					err = batch.LogData(v, nil)
					want = append(want, dop{"log-data", [][]byte{v}})
				case 5:
					size := uint32(rng.Intn(1 << 20))
					err = batch.DeleteSized(k, size, nil)
					// pebble stores the deleted value's size plus the key's length.
					want = append(want, dop{"delete-sized", [][]byte{k, []byte(strconv.FormatUint(uint64(size)+uint64(len(k)), 10))}})
				case 6:
					err = batch.RangeKeySet(k, k2, nil, v, nil)
					want = append(want, dop{"range-key-set", [][]byte{k, k2, {}, v}})
				case 7:
					err = batch.RangeKeyDelete(k, k2, nil)
					want = append(want, dop{"range-key-delete", [][]byte{k, k2}})
				default:
					err = batch.Set(k, v, nil)
					want = append(want, dop{"put", [][]byte{k, v}})
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := batch.Commit(pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		var recs [][]byte
		for _, p := range globOne(t, dir, "*.log") {
			num, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), ".log"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, readPebbleLog(t, p, num)...)
		}
		checkBatches(t, recs, want, 0)
	}
}

// liveFile is one table of a version: level, file number, size, and the
// smallest and largest internal keys as "hex(userkey)#seq,kind".
type liveFile struct {
	level, num, size  uint64
	smallest, largest string
}

// replayManifest decodes every VersionEdit of a MANIFEST's records and
// applies their add-file and delete-file lines; it also returns the
// comparator named.
func replayManifest(t *testing.T, recs [][]byte, withKeys bool) (map[uint64]liveFile, string) {
	t.Helper()
	live := map[uint64]liveFile{}
	var comparator string
	for i, r := range recs {
		text, err := dbdecode.AppendVersionEdit(nil, r)
		if err != nil {
			t.Fatalf("MANIFEST record %d: %v\n%s", i, err, text)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
			f := strings.Fields(l)
			switch f[0] {
			case "comparator":
				comparator = f[1]
			case "delete-file":
				num, _ := strconv.ParseUint(f[2], 10, 64)
				if _, ok := live[num]; !ok {
					t.Fatalf("record %d deletes file %d, which is not live: %s", i, num, l)
				}
				delete(live, num)
			case "add-file":
				lf := parseTable(t, f[1:], withKeys)
				live[lf.num] = lf
			}
		}
	}
	return live, comparator
}

// liveFiles learns recs with dbdecode's Manifest decoder and parses the
// tables of its live-state summary ("live [cf=NAME] L1 000007 size=...
// smallest=... largest=..."), by column family; it also returns the
// summary's numbers (next-file, last-seq, ...).
func liveFiles(t *testing.T, recs [][]byte, withKeys bool) (map[string]map[uint64]liveFile, map[string]string) {
	t.Helper()
	m := dbdecode.NewManifest(0)
	for i, r := range recs {
		if err := m.Learn(&decode.Record{N: int64(i), Payload: r}); err != nil {
			t.Fatal(err)
		}
	}
	w := decode.NewWriter(nil, decode.Output{}, -1)
	if err := m.Summary(w); err != nil {
		t.Fatal(err)
	}
	files := map[string]map[uint64]liveFile{}
	nums := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(w.B), "\n"), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "live" {
			t.Fatalf("summary line %q", l)
		}
		f = f[1:]
		cf := "default"
		if v, ok := strings.CutPrefix(f[0], "cf="); ok {
			name, err := dbdecode.Unescape(v)
			if err != nil {
				t.Fatalf("summary line %q: %v", l, err)
			}
			cf, f = string(name), f[1:]
		}
		if len(f) == 1 {
			if k, v, ok := strings.Cut(f[0], "="); ok {
				nums[k] = v
			}
			continue
		}
		if len(f) < 3 || !strings.HasPrefix(f[0], "L") || strings.Contains(f[1], "=") {
			continue // a level's totals, a column family's name
		}
		lf := parseTable(t, f, withKeys)
		if files[cf] == nil {
			files[cf] = map[uint64]liveFile{}
		}
		files[cf][lf.num] = lf
	}
	return files, nums
}

// parseTable parses a table of an add-file or live line: "L1", the file
// number, then key=value parts (keys as hex unless !withKeys).
func parseTable(t *testing.T, f []string, withKeys bool) liveFile {
	t.Helper()
	var lf liveFile
	fmt.Sscanf(f[0], "L%d", &lf.level)
	lf.num, _ = strconv.ParseUint(f[1], 10, 64)
	for _, kv := range f[2:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "size":
			lf.size, _ = strconv.ParseUint(v, 10, 64)
		case "smallest":
			lf.smallest = ikeyHex(t, v)
		case "largest":
			lf.largest = ikeyHex(t, v)
		}
	}
	if !withKeys {
		lf.smallest, lf.largest = "", ""
	}
	return lf
}

// ikeyHex turns dbdecode's USERKEY#SEQ,KIND into hex(userkey)#SEQ,KIND.
func ikeyHex(t *testing.T, s string) string {
	i := strings.LastIndexByte(s, '#')
	if i < 0 {
		t.Fatalf("internal key %q", s)
	}
	uk, err := dbdecode.Unescape(s[:i])
	if err != nil {
		t.Fatalf("internal key %q: %v", s, err)
	}
	return hex.EncodeToString(uk) + s[i:]
}

func sortedFiles(m map[uint64]liveFile) []liveFile {
	out := make([]liveFile, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b liveFile) int { return int(a.num) - int(b.num) })
	return out
}

// currentManifest returns the MANIFEST that dir's CURRENT names.
func currentManifest(t *testing.T, dir string) (string, uint64) {
	t.Helper()
	cur, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSpace(string(cur))
	num, err := strconv.ParseUint(strings.TrimPrefix(name, "MANIFEST-"), 10, 64)
	if err != nil {
		t.Fatalf("CURRENT: %q", cur)
	}
	return filepath.Join(dir, name), num
}

// fillAndCompact writes keys of random 100-byte values through put, in rounds
// with a compaction after each.
func fillAndCompact(t *testing.T, rng *rand.Rand, rounds int, put func(k, v []byte) error, compact func() error) {
	for r := 0; r < rounds; r++ {
		for i := 0; i < 3000; i++ {
			v := make([]byte, 100) // random: tables do not compress away
			rng.Read(v)
			if err := put([]byte(fmt.Sprintf("key%06d", rng.Intn(20000))), v); err != nil {
				t.Fatal(err)
			}
		}
		if err := compact(); err != nil {
			t.Fatal(err)
		}
	}
}

// goleveldbTables parses goleveldb's "leveldb.sstables" property: its
// lines "NUM:SIZE[...]" under "--- level L ---".
var goleveldbTableLine = regexp.MustCompile(`^(\d+):(\d+)\[`)

func TestDecodeGoLevelDBManifest(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeeds(t, 1)[0]))
	dir := t.TempDir()
	// Small tables and buffers: many tables on several levels.
	db, err := leveldb.OpenFile(dir, &opt.Options{WriteBuffer: 64 << 10, CompactionTableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	fillAndCompact(t, rng, 4, func(k, v []byte) error { return db.Put(k, v, nil) },
		func() error { return db.CompactRange(util.Range{Start: []byte("key005"), Limit: []byte("key010")}) })
	prop, err := db.GetProperty("leveldb.sstables")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[uint64]liveFile{}
	level := uint64(0)
	for _, l := range strings.Split(prop, "\n") {
		if _, err := fmt.Sscanf(l, "--- level %d ---", &level); err == nil {
			continue
		}
		if m := goleveldbTableLine.FindStringSubmatch(l); m != nil {
			num, _ := strconv.ParseUint(m[1], 10, 64)
			size, _ := strconv.ParseUint(m[2], 10, 64)
			want[num] = liveFile{level: level, num: num, size: size}
		}
	}
	if len(want) < 3 {
		t.Fatalf("goleveldb lists fewer than 3 tables:\n%q", prop)
	}
	path, _ := currentManifest(t, dir)
	live, cmp := replayManifest(t, readJournal(t, path), false)
	if cmp != "leveldb.BytewiseComparator" {
		t.Errorf("comparator %q", cmp)
	}
	if fmt.Sprint(sortedFiles(live)) != fmt.Sprint(sortedFiles(want)) {
		t.Fatalf("MANIFEST replayed:\n%v\ngoleveldb's tables:\n%v", sortedFiles(live), sortedFiles(want))
	}
	if summary, _ := liveFiles(t, readJournal(t, path), false); fmt.Sprint(sortedFiles(summary["default"])) != fmt.Sprint(sortedFiles(want)) {
		t.Fatalf("live state:\n%v\ngoleveldb's tables:\n%v", sortedFiles(summary["default"]), sortedFiles(want))
	}
	t.Logf("%d live tables agree with goleveldb's", len(want))
}

func TestDecodePebbleManifest(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeeds(t, 1)[0]))
	dir := t.TempDir()
	db, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatNewest, MemTableSize: 256 << 10,
		L0CompactionThreshold: 100, L0StopWritesThreshold: 1000})
	if err != nil {
		t.Fatal(err)
	}
	fillAndCompact(t, rng, 4, func(k, v []byte) error { return db.Set(k, v, pebble.NoSync) },
		func() error { return db.Flush() })
	levels, err := db.SSTables()
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]liveFile{}
	for l, tables := range levels {
		for _, ti := range tables {
			want[uint64(ti.FileNum)] = liveFile{level: uint64(l), num: uint64(ti.FileNum), size: ti.Size,
				smallest: fmt.Sprintf("%x#%d,%s", ti.Smallest.UserKey, ti.Smallest.SeqNum(), ti.Smallest.Kind()),
				largest:  fmt.Sprintf("%x#%d,%s", ti.Largest.UserKey, ti.Largest.SeqNum(), ti.Largest.Kind())}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if len(want) < 3 {
		t.Fatalf("pebble lists %d tables, want at least 3", len(want))
	}
	// pebble names its current MANIFEST with a marker file, not CURRENT:
	// take the newest.
	ms := globOne(t, dir, "MANIFEST-*")
	path := ms[len(ms)-1]
	num, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(path), "MANIFEST-"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	recs := readPebbleLog(t, path, num)
	live, cmp := replayManifest(t, recs, true)
	if cmp != "leveldb.BytewiseComparator" {
		t.Errorf("comparator %q", cmp)
	}
	if fmt.Sprint(sortedFiles(live)) != fmt.Sprint(sortedFiles(want)) {
		t.Fatalf("MANIFEST replayed:\n%v\npebble's tables:\n%v", sortedFiles(live), sortedFiles(want))
	}
	if summary, _ := liveFiles(t, recs, true); fmt.Sprint(sortedFiles(summary["default"])) != fmt.Sprint(sortedFiles(want)) {
		t.Fatalf("live state:\n%v\npebble's tables:\n%v", sortedFiles(summary["default"]), sortedFiles(want))
	}
	t.Logf("%d live tables agree with pebble's", len(want))
}

// ldbOp matches one operation of ldb dump_wal --print_value: NAME(cf)
// then hex fields separated by " : " (put) or " " (range delete).
var ldbOp = regexp.MustCompile(`([A-Z_]+)\((\d+)\) : (0x[0-9A-F]*)(?: : (0x[0-9A-F]*)| (0x[0-9A-F]*))?`)

// ldbNames maps ldb's operation names to dbdecode's (column family 0).
var ldbNames = map[string]string{"PUT": "put", "DELETE": "delete", "SINGLE_DELETE": "single-delete",
	"DELETE_RANGE": "range-delete", "MERGE": "merge"}

// TestDecodeRocksDBWAL writes a RocksDB WAL with RocksDB's own ldb tool
// and compares the decoding with ldb dump_wal, batch by batch. Each ldb
// run opens the database, writes and closes it (flushing), so the WAL of
// each run is copied before the next.
func TestDecodeRocksDBWAL(t *testing.T) {
	ldb, err := exec.LookPath("ldb")
	if err != nil {
		t.Skip("ldb (Debian's rocksdb-tools) is not installed")
	}
	dir, walDir := t.TempDir(), t.TempDir()
	runs := [][]string{
		{"put", "--create_if_missing", "user00001", "v 1"},
		{"batchput", "user00002", "v2", "k\\x00 3", "v\\x5c3"},
		{"delete", "user00001"},
		{"deleterange", "a", "user00002"},
	}
	var wals []string
	for i, args := range runs {
		out, err := exec.Command(ldb, append([]string{"--db=" + dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ldb %q: %v\n%s", args, err, out)
		}
		for _, p := range globOne(t, dir, "*.log") {
			dst := filepath.Join(walDir, fmt.Sprintf("%02d-%s", i, filepath.Base(p)))
			copyFile(t, p, dst)
			wals = append(wals, dst)
		}
	}
	checked := 0
	for _, w := range wals {
		out, err := exec.Command(ldb, "dump_wal", "--walfile="+w, "--print_value").CombinedOutput()
		if err != nil {
			t.Fatalf("ldb dump_wal %s: %v\n%s", w, err, out)
		}
		var ref []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l == "" || strings.HasPrefix(l, "Sequence,") {
				continue
			}
			cols := strings.SplitN(l, ",", 5)
			if len(cols) != 5 {
				t.Fatalf("ldb line %q", l)
			}
			var ops []string
			for _, m := range ldbOp.FindAllStringSubmatch(cols[4], -1) {
				name := ldbNames[m[1]]
				if m[2] != "0" {
					name += "-cf " + m[2]
				}
				var fields []string
				for _, h := range m[3:] {
					if h == "" {
						continue
					}
					b, err := hex.DecodeString(strings.TrimPrefix(h, "0x"))
					if err != nil {
						t.Fatalf("ldb hex %q", h)
					}
					fields = append(fields, fmt.Sprintf("%q", b))
				}
				ops = append(ops, name+" "+strings.Join(fields, " "))
			}
			ref = append(ref, fmt.Sprintf("seq %s count %s size %s: %s", cols[0], cols[1], cols[2], strings.Join(ops, "; ")))
		}
		var got []string
		for _, r := range readJournal(t, w) {
			d := parseBatchText(t, dbdecode.Batch(r, dbdecode.Options{Dialect: dbdecode.DialectRocksDB}))
			var ops []string
			for _, o := range d.ops {
				var fields []string
				for _, f := range o.fields {
					fields = append(fields, fmt.Sprintf("%q", f))
				}
				ops = append(ops, o.name+" "+strings.Join(fields, " "))
			}
			got = append(got, fmt.Sprintf("seq %d count %d size %d: %s", d.seq, d.count, len(r), strings.Join(ops, "; ")))
		}
		if strings.Join(got, "\n") != strings.Join(ref, "\n") {
			t.Fatalf("%s: decoded\n%s\nldb dump_wal\n%s", w, strings.Join(got, "\n"), strings.Join(ref, "\n"))
		}
		checked += len(got)
	}
	if checked < len(runs) {
		t.Fatalf("%d batches compared, want at least %d", checked, len(runs))
	}
	t.Logf("%d RocksDB batches agree with ldb dump_wal", checked)
}

// ldbTableLine is a table of ldb manifest_dump: " NUM:SIZE[...".
var ldbTableLine = regexp.MustCompile(`^ (\d+):(\d+)\[`)

// TestDecodeRocksDBManifest writes a RocksDB database with ldb (each run
// flushes a table; the fourth table starts a compaction) and compares the MANIFEST's decoding,
// replayed, with ldb manifest_dump: live tables per level with sizes, and
// the final next-file and last-seq numbers.
func TestDecodeRocksDBManifest(t *testing.T) {
	ldb, err := exec.LookPath("ldb")
	if err != nil {
		t.Skip("ldb (Debian's rocksdb-tools) is not installed")
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"put", "--create_if_missing", "a1", "v"},
		{"batchput", "b1", "v", "b2", "v"},
		{"put", "c1", "v"},
		{"deleterange", "a", "b2"},
		{"put", "d1", "v"},
		{"put", "e1", "v"},
	} {
		if out, err := exec.Command(ldb, append([]string{"--db=" + dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ldb %q: %v\n%s", args, err, out)
		}
	}
	path, _ := currentManifest(t, dir)
	out, err := exec.Command(ldb, "manifest_dump", "--path="+path).CombinedOutput()
	if err != nil {
		t.Fatalf("ldb manifest_dump: %v\n%s", err, out)
	}
	want := map[uint64]liveFile{}
	level := uint64(0)
	var wantNext, wantSeq string
	for _, l := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(l, "--- level %d ---", &level); err == nil {
			continue
		}
		if m := ldbTableLine.FindStringSubmatch(l); m != nil {
			num, _ := strconv.ParseUint(m[1], 10, 64)
			size, _ := strconv.ParseUint(m[2], 10, 64)
			want[num] = liveFile{level: level, num: num, size: size}
		}
		if f := strings.Fields(l); len(f) >= 4 && f[0] == "next_file_number" && f[2] == "last_sequence" {
			wantNext, wantSeq = f[1], f[3]
		}
	}
	if len(want) < 2 || wantNext == "" {
		t.Fatalf("ldb manifest_dump lists %d tables, next file %q:\n%s", len(want), wantNext, out)
	}
	recs := readJournal(t, path)
	live, cmp := replayManifest(t, recs, false)
	if cmp != "leveldb.BytewiseComparator" {
		t.Errorf("comparator %q", cmp)
	}
	if fmt.Sprint(sortedFiles(live)) != fmt.Sprint(sortedFiles(want)) {
		t.Fatalf("MANIFEST replayed:\n%v\nldb manifest_dump:\n%v", sortedFiles(live), sortedFiles(want))
	}
	var next, seq string
	for _, r := range recs {
		for _, l := range strings.Split(string(dbdecode.VersionEdit(r)), "\n") {
			if v, ok := strings.CutPrefix(l, "next-file "); ok {
				next = v
			}
			if v, ok := strings.CutPrefix(l, "last-seq "); ok {
				seq = v
			}
		}
	}
	// ldb prints the recovered VersionSet, whose next file number is one
	// past the MANIFEST's (RocksDB's recovery stores next_file + 1).
	n, _ := strconv.ParseUint(next, 10, 64)
	if strconv.FormatUint(n+1, 10) != wantNext || seq != wantSeq {
		t.Fatalf("next file %s, last seq %s; ldb says %s (one past) and %s", next, seq, wantNext, wantSeq)
	}
	summary, nums := liveFiles(t, recs, false)
	if fmt.Sprint(sortedFiles(summary["default"])) != fmt.Sprint(sortedFiles(want)) || nums["next-file"] != next || nums["last-seq"] != seq {
		t.Fatalf("live state: %v, next file %s, last seq %s\nldb manifest_dump: %v, %s, %s", sortedFiles(summary["default"]), nums["next-file"], nums["last-seq"],
			sortedFiles(want), wantNext, wantSeq)
	}
	t.Logf("%d live tables agree with ldb manifest_dump", len(want))
}

// copyFile copies the file src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// osDir is the directory beside a WAL, for a decoder: what cmd/recfs
// gives it.
type osDir string

func (d osDir) Names() ([]string, error) {
	ents, err := os.ReadDir(string(d))
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out, err
}

func (d osDir) ReadFile(name string, max int64) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), name))
}

func (d osDir) OpenRecords(name string) (decode.RecordsCloser, error) {
	return index.Open(context.Background(), filepath.Join(string(d), name), index.Options{CacheDir: "-"})
}

// ldbCFHeader starts a column family's section of ldb manifest_dump.
var ldbCFHeader = regexp.MustCompile(`^-+ Column family "(.*)"  \(ID (\d+)\) -+$`)

// TestDecodeRocksDBColumnFamilies: a RocksDB database with column families
// (one named with a space), written with ldb. Its WALs decode with the
// families' names, which the MANIFEST beside them gives, as ldb dump_wal
// numbers them and ldb manifest_dump names those numbers; the MANIFEST's
// live state lists, per family, the tables ldb manifest_dump lists.
func TestDecodeRocksDBColumnFamilies(t *testing.T) {
	ldb, err := exec.LookPath("ldb")
	if err != nil {
		t.Skip("ldb (Debian's rocksdb-tools) is not installed")
	}
	dir, walDir := t.TempDir(), t.TempDir()
	run := func(args ...string) {
		if out, err := exec.Command(ldb, append([]string{"--db=" + dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ldb %q: %v\n%s", args, err, out)
		}
	}
	run("put", "--create_if_missing", "a", "1")
	run("create_column_family", "user data")
	run("create_column_family", "meta")
	var wals []string
	for i, args := range [][]string{
		{"--column_family=user data", "batchput", "k1", "v 1", "k2", "v2"},
		{"--column_family=meta", "put", "m1", "x y"},
		{"--column_family=user data", "delete", "k1"},
	} {
		run(args...)
		for _, p := range globOne(t, dir, "*.log") {
			dst := filepath.Join(walDir, fmt.Sprintf("%06d.log", 100+i))
			copyFile(t, p, dst)
			wals = append(wals, dst)
		}
	}
	manifest, _ := currentManifest(t, dir)
	out, err := exec.Command(ldb, "manifest_dump", "--path="+manifest).CombinedOutput()
	if err != nil {
		t.Fatalf("ldb manifest_dump: %v\n%s", err, out)
	}
	names := map[string]string{}             // id -> name
	want := map[string]map[uint64]liveFile{} // name -> tables
	cf, level := "", uint64(0)
	for _, l := range strings.Split(string(out), "\n") {
		if m := ldbCFHeader.FindStringSubmatch(l); m != nil {
			cf, names[m[2]] = m[1], m[1]
			want[cf] = map[uint64]liveFile{}
			continue
		}
		if _, err := fmt.Sscanf(l, "--- level %d ---", &level); err == nil {
			continue
		}
		if m := ldbTableLine.FindStringSubmatch(l); m != nil && cf != "" {
			num, _ := strconv.ParseUint(m[1], 10, 64)
			size, _ := strconv.ParseUint(m[2], 10, 64)
			want[cf][num] = liveFile{level: level, num: num, size: size}
		}
	}
	if len(names) != 3 {
		t.Fatalf("ldb manifest_dump names %v", names)
	}
	// The WALs beside their database's MANIFEST (CURRENT names it).
	for _, f := range []string{"CURRENT", filepath.Base(manifest)} {
		copyFile(t, filepath.Join(dir, f), filepath.Join(walDir, f))
	}
	plan, err := decoders.Prepare(decoders.Spec{Mode: "batch"})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, w := range wals {
		dump, err := exec.Command(ldb, "dump_wal", "--walfile="+w, "--print_value").CombinedOutput()
		if err != nil {
			t.Fatalf("ldb dump_wal %s: %v\n%s", w, err, dump)
		}
		var ref []string
		for _, m := range ldbOp.FindAllStringSubmatch(string(dump), -1) {
			fields := []string{names[m[2]]}
			for _, h := range m[3:] {
				if h != "" {
					b, _ := hex.DecodeString(strings.TrimPrefix(h, "0x"))
					fields = append(fields, fmt.Sprintf("%q", b))
				}
			}
			ref = append(ref, ldbNames[m[1]]+"-cf "+strings.Join(fields, " "))
		}
		tab, err := index.Open(context.Background(), w, index.Options{CacheDir: "-"})
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := plan.Open(tab, decode.Env{Path: w, Dir: osDir(walDir)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for n := int64(0); n < tab.Len(); n++ {
			text, err := s.Render(nil, tab, 0, n)
			if err != nil {
				t.Fatalf("%s record %d: %v", w, n, err)
			}
			for _, o := range parseBatchText(t, text).ops {
				var fields []string
				for i, f := range o.fields {
					if i == 0 {
						fields = append(fields, string(f)) // the family's name
						continue
					}
					fields = append(fields, fmt.Sprintf("%q", f))
				}
				got = append(got, o.name+" "+strings.Join(fields, " "))
			}
		}
		tab.Close()
		if strings.Join(got, "\n") != strings.Join(ref, "\n") || len(got) == 0 {
			t.Fatalf("%s: decoded\n%s\nldb dump_wal, with manifest_dump's names\n%s", w, strings.Join(got, "\n"), strings.Join(ref, "\n"))
		}
		if !strings.Contains(s.Why(), "column families named by "+filepath.Base(manifest)) {
			t.Errorf("the session says %q", s.Why())
		}
		checked += len(got)
	}
	live, _ := liveFiles(t, readJournal(t, manifest), false)
	for name, files := range want {
		if fmt.Sprint(sortedFiles(live[name])) != fmt.Sprint(sortedFiles(files)) {
			t.Fatalf("column family %q: live state\n%v\nldb manifest_dump\n%v", name, sortedFiles(live[name]), sortedFiles(files))
		}
	}
	t.Logf("%d operations on 3 column families agree with ldb", checked)
}
