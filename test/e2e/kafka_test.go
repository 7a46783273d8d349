package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/test/internal/vgw"
)

// kafkaPart is a partition directory as a broker keeps it: segments named
// by their 20-digit base offset beside their index files, and what their
// records hold.
type kafkaPart struct {
	dir      string
	segments []string          // segment file names, in offset order
	values   map[int64][]byte  // Kafka offset → value
	keys     map[int64]string  // Kafka offset → key
	others   map[string][]byte // index files and checkpoints, by name
}

// kafkaSegment encodes batches of n records each from offset base (zstd
// batches and plain ones in turn, keys "user-OFFSET", a header on every
// fifth record) and records what they hold in p.
func (p *kafkaPart) kafkaSegment(t *testing.T, base int64, batches, n int) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	var seg []byte
	off := base
	for b := range batches {
		spec := codectest.KafkaBatchSpec{BaseOffset: off, BaseTimestamp: 1700000000000 + off, LeaderEpoch: 1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		if b%2 == 1 {
			spec.Attr = 4
			spec.Compress = func(p []byte) []byte { return enc.EncodeAll(p, nil) }
		}
		for i := range n {
			o := off + int64(i)
			r := codectest.KafkaRecord{Key: fmt.Appendf(nil, "user-%d", o), Value: fmt.Appendf(nil, `{"order":%d,"total":%d.50}`, o, o%97)}
			if o%5 == 0 {
				r.Headers = []codectest.KafkaHeader{{Key: "trace-id", Value: fmt.Appendf(nil, "tr-%x", o*7919)}}
			}
			spec.Records = append(spec.Records, r)
			p.values[o], p.keys[o] = r.Value, string(r.Key)
		}
		seg = append(seg, codectest.KafkaBatch(spec)...)
		off += int64(n)
	}
	return seg
}

// addSegment writes the segment starting at base, with its .index,
// .timeindex and .snapshot files.
func (p *kafkaPart) addSegment(t *testing.T, base int64, batches, n int) {
	name := fmt.Sprintf("%020d", base)
	seg := p.kafkaSegment(t, base, batches, n)
	write := func(file string, b []byte) {
		if err := os.WriteFile(filepath.Join(p.dir, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(name+".log", seg)
	idx := make([]byte, 4096) // a broker's index: 8-byte entries, zero-filled past the last
	copy(idx, []byte{0, 0, 0, 7, 0, 0, 4, 0})
	for _, f := range []struct {
		ext string
		b   []byte
	}{{".index", idx}, {".timeindex", make([]byte, 4096)}, {".snapshot", []byte("\x00\x01producer state\x00")}} {
		write(name+f.ext, f.b)
		p.others[name+f.ext] = f.b
	}
	p.segments = append(p.segments, name+".log")
}

// newKafkaPart makes orders-0/ with three segments of 3 batches of 40
// records (offsets 0-359) and the partition's checkpoint files.
func newKafkaPart(t *testing.T) *kafkaPart {
	root := t.TempDir()
	p := &kafkaPart{dir: filepath.Join(root, "orders-0"), values: map[int64][]byte{}, keys: map[int64]string{}, others: map[string][]byte{}}
	if err := os.Mkdir(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, base := range []int64{0, 120, 240} {
		p.addSegment(t, base, 3, 40)
	}
	for name, b := range map[string][]byte{"leader-epoch-checkpoint": []byte("0\n1\n1 0\n"), "partition.metadata": []byte("version: 0\ntopic_id: 6kYbO3LsSWuVHkLDE7vONQ\n")} {
		os.WriteFile(filepath.Join(p.dir, name), b, 0o644)
		p.others[name] = b
	}
	return p
}

// TestKafkaPartitionMount mounts a partition directory on both backends:
// its segments are record directories in offset order, its index,
// snapshot and checkpoint files plain files of the same bytes; records
// read back by number and by "@OFFSET"; a --decode kafka mount shows keys
// and headers that grep -r finds, each record once.
func TestKafkaPartitionMount(t *testing.T) {
	needFUSE(t)
	p := newKafkaPart(t)
	eachBackend(t, func(t *testing.T, backend string) {
		mnt := newMountDir(t)
		startMount(t, p.dir, mnt, "--backend", backend, "--no-cache")
		ents, err := os.ReadDir(mnt)
		if err != nil {
			t.Fatal(err)
		}
		var segs []string
		for _, e := range ents {
			if e.IsDir() {
				segs = append(segs, e.Name())
			} else if want, ok := p.others[e.Name()]; !ok || !bytes.Equal(mustRead(t, filepath.Join(mnt, e.Name())), want) {
				t.Errorf("plain file %s: not passed through as it is", e.Name())
			}
		}
		if !sort.StringsAreSorted(segs) || strings.Join(segs, " ") != strings.Join(p.segments, " ") {
			t.Fatalf("record directories %v, want the segments %v in order", segs, p.segments)
		}
		for i, seg := range p.segments {
			names := recordNames(t, filepath.Join(mnt, seg))
			if len(names) != 120 {
				t.Fatalf("%s: %d records", seg, len(names))
			}
			for _, k := range []int{0, 41, 119} {
				off := int64(i*120 + k)
				if got := mustRead(t, filepath.Join(mnt, seg, names[k])); !bytes.Equal(got, p.values[off]) {
					t.Fatalf("%s/%s: %q, want %q", seg, names[k], got, p.values[off])
				}
				at := filepath.Join(mnt, seg, fmt.Sprintf("@%d", off))
				if got := mustRead(t, at); !bytes.Equal(got, p.values[off]) {
					t.Fatalf("%s: %q, want %q", at, got, p.values[off])
				}
			}
			if _, err := os.Stat(filepath.Join(mnt, seg, "@999999")); !os.IsNotExist(err) {
				t.Errorf("@ of an offset the segment does not hold: %v", err)
			}
		}
		// The log directory above the partition: topics and partitions.
		lm := newMountDir(t)
		startMount(t, filepath.Dir(p.dir), lm, "--backend", backend, "--no-cache")
		if got := mustRead(t, filepath.Join(lm, "orders-0", p.segments[2], "@300")); !bytes.Equal(got, p.values[300]) {
			t.Fatalf("log directory mount: orders-0/%s/@300 = %q", p.segments[2], got)
		}
		info := infoLines(t, filepath.Join(mnt, p.segments[1], ".recfs"))
		if f, l := strings.Join(info["first offset"], ""), strings.Join(info["last offset"], ""); f != "120" || l != "239" {
			t.Errorf(".recfs offsets %s..%s, want 120..239", f, l)
		}

		// --rw: segments stay read-only (a broker writes them).
		rw := newMountDir(t)
		startMount(t, p.dir, rw, "--backend", backend, "--no-cache", "--rw")
		before := mustRead(t, filepath.Join(p.dir, p.segments[0]))
		if err := os.WriteFile(filepath.Join(rw, p.segments[0], "new"), []byte("x"), 0o644); !errors.Is(err, syscall.EROFS) {
			t.Errorf("a record created in a segment through --rw: %v, want EROFS", err)
		}
		if !bytes.Equal(mustRead(t, filepath.Join(p.dir, p.segments[0])), before) {
			t.Fatal("the refused write changed the segment")
		}

		dm := newMountDir(t)
		startMount(t, p.dir, dm, "--backend", backend, "--no-cache", "--decode", "kafka")
		off := int64(155) // a record with a header
		line := string(mustRead(t, filepath.Join(dm, p.segments[1], fmt.Sprintf("@%d", off))))
		if !strings.HasPrefix(line, fmt.Sprintf("offset=%d\ttime=", off)) || !strings.Contains(line, "\tkey="+p.keys[off]+"\t") ||
			!strings.Contains(line, fmt.Sprintf("\theader.trace-id=tr-%x\t", off*7919)) || !strings.HasSuffix(line, "\tvalue="+string(p.values[off])+"\n") {
			t.Fatalf("decoded record %d: %q", off, line)
		}
		for _, needle := range []string{"key=" + p.keys[off] + "\t", fmt.Sprintf("tr-%x", off*7919)} {
			r := runCmd(t, "grep", "-rlF", "--", needle, dm)
			want := filepath.Join(dm, p.segments[1], fmt.Sprintf("%06d", off-120))
			if r.code != 0 || strings.TrimSpace(r.stdout) != want {
				t.Fatalf("grep -rl %q: exit %d, %q, want only %s", needle, r.code, r.stdout, want)
			}
		}
		r := runCmd(t, "grep", "-rc", "offset=", dm)
		total := 0
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var n int
			if i := strings.LastIndex(l, ":"); i >= 0 {
				fmt.Sscan(l[i+1:], &n)
			}
			total += n
		}
		if total != 360 {
			t.Errorf("grep -r sees %d record lines, want each of the 360 records once", total)
		}
	})
}

// TestKafkaFollowPartition follows a partition directory on both
// backends: a batch appended to the active segment shows, a new segment
// appears, and a deleted (retired) segment goes away.
func TestKafkaFollowPartition(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		p := newKafkaPart(t)
		mnt := newMountDir(t)
		startMount(t, p.dir, mnt, "--backend", backend, "--no-cache", "--follow", "--follow-interval", "20ms")
		active := filepath.Join(mnt, p.segments[2])
		waitRecords(t, active, 120)
		more := p.kafkaSegment(t, 360, 1, 10)
		f, err := os.OpenFile(filepath.Join(p.dir, p.segments[2]), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(more)
		f.Close()
		waitRecords(t, active, 130)
		if got := mustRead(t, filepath.Join(active, "@365")); !bytes.Equal(got, p.values[365]) {
			t.Fatalf("@365 after the append: %q", got)
		}
		// A broker rolls a segment as an empty file, then writes to it.
		next := filepath.Join(p.dir, fmt.Sprintf("%020d.log", 370))
		if err := os.WriteFile(next, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		waitEntry(t, filepath.Join(mnt, filepath.Base(next)), true)
		p.addSegment(t, 370, 1, 5)
		waitRecords(t, filepath.Join(mnt, p.segments[3]), 5)
		for _, ext := range []string{".log", ".index", ".timeindex", ".snapshot"} {
			os.Remove(filepath.Join(p.dir, strings.TrimSuffix(p.segments[0], ".log")+ext))
		}
		waitEntry(t, filepath.Join(mnt, p.segments[0]), false)
	})
}

// waitEntry polls, with a bound, until path exists (or is gone).
func waitEntry(t *testing.T, path string, exists bool) {
	t.Helper()
	waitUntil(t, func() (bool, string) {
		_, err := os.Stat(path)
		return (err == nil) == exists, fmt.Sprintf("%s: exists %v, want %v (%v)", path, err == nil, exists, err)
	})
}

// TestKafkaS3Tiered mounts an S3 prefix of tiered segments (each segment
// object beside its index objects, as tiered storage uploads them) on both
// backends: the segments are record directories and their records read
// back by number and by offset.
func TestKafkaS3Tiered(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	p := newKafkaPart(t)
	for _, seg := range p.segments {
		for _, ext := range []string{".log", ".index", ".timeindex", ".snapshot"} {
			name := strings.TrimSuffix(seg, ".log") + ext
			srv.Put(t, "tiered/orders-0/"+strings.TrimSuffix(seg, ".log")+"-Xk2mW9"+ext, mustRead(t, filepath.Join(p.dir, name)))
		}
	}
	url := vgw.URL("tiered/orders-0/")
	eachBackend(t, func(t *testing.T, backend string) {
		mnt := newMountDir(t)
		startMount(t, url, mnt, "--backend", backend)
		for i, seg := range p.segments {
			dir := filepath.Join(mnt, strings.TrimSuffix(seg, ".log")+"-Xk2mW9.log")
			if names := recordNames(t, dir); len(names) != 120 {
				t.Fatalf("%s: %d records", dir, len(names))
			}
			off := int64(i*120 + 77)
			if got := mustRead(t, filepath.Join(dir, fmt.Sprintf("@%d", off))); !bytes.Equal(got, p.values[off]) {
				t.Fatalf("%s/@%d: %q", dir, off, got)
			}
		}
		r := runRecfs(t, "cat", "--offset", "250", vgw.URL("tiered/orders-0/"+strings.TrimSuffix(p.segments[2], ".log")+"-Xk2mW9.log"))
		if r.code != 0 || r.stdout != string(p.values[250]) {
			t.Fatalf("recfs cat --offset 250 of the S3 segment: %d %q %s", r.code, r.stdout, r.stderr)
		}
	})
}
