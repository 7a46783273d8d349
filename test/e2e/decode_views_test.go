package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/test/internal/tfexamplepb"
	"github.com/recfs/recfs/test/internal/vgw"
)

// examples returns n serialized Examples (label i%10, a name with a space,
// a weight) and the TFRecord file of them.
func examples(t *testing.T, n int) ([][]byte, []byte) {
	t.Helper()
	var recs [][]byte
	var file []byte
	for i := range n {
		ex := &tfexamplepb.Example{Features: &tfexamplepb.Features{Feature: map[string]*tfexamplepb.Feature{
			"label":  {Kind: &tfexamplepb.Feature_Int64List{Int64List: &tfexamplepb.Int64List{Value: []int64{int64(i % 10)}}}},
			"name":   {Kind: &tfexamplepb.Feature_BytesList{BytesList: &tfexamplepb.BytesList{Value: [][]byte{[]byte(fmt.Sprintf("image %d", i))}}}},
			"weight": {Kind: &tfexamplepb.Feature_FloatList{FloatList: &tfexamplepb.FloatList{Value: []float32{float32(i) / 4}}}},
		}}}
		b, err := proto.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, b)
		file = tfrecord.AppendRecord(file, b)
	}
	return recs, file
}

// exampleText is the text --decode example shows for Example i of
// examples.
func exampleText(i int) string {
	return fmt.Sprintf(`{"features": {"label": [%d], "name": ["image %d"], "weight": [%g]}}`+"\n", i%10, i, float32(i)/4)
}

// TestDecodeExampleMount mounts TFRecord files of Examples decoded, as a
// file (--decode example) and in a directory (--decode auto, which knows
// them by their records), on both backends: every record reads as its
// JSON with ls -l sizes equal to the bytes read, .recfs says which decoder
// and why, and grep -r for a label finds exactly the records holding it.
func TestDecodeExampleMount(t *testing.T) {
	needFUSE(t)
	const n = 300
	_, file := examples(t, n)
	dir := t.TempDir()
	src := filepath.Join(dir, "train-00000-of-00001.bin") // a name that says nothing
	if err := os.WriteFile(src, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("label 7 is a horse\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eachBackend(t, func(t *testing.T, backend string) {
		fm, dm := newMountDir(t), newMountDir(t)
		startMount(t, src, fm, "--backend", backend, "--decode", "example")
		startMount(t, dir, dm, "--backend", backend, "--decode", "auto", "--hide-other")
		recDir := filepath.Join(dm, filepath.Base(src))
		for _, mnt := range []string{fm, recDir} {
			for _, i := range []int{0, 7, 123, n - 1} {
				p := filepath.Join(mnt, fmt.Sprintf("%06d", i))
				got, err := os.ReadFile(p)
				fi, serr := os.Stat(p)
				if err != nil || serr != nil || string(got) != exampleText(i) || fi.Size() != int64(len(got)) {
					t.Fatalf("%s: %q (%v), size %v (%v); want %q", p, got, err, fi, serr, exampleText(i))
				}
			}
		}
		if info := infoLines(t, filepath.Join(recDir, ".recfs")); !strings.HasPrefix(strings.Join(info["decode"], ""), "example (auto: the first 8 records are example records)") {
			t.Errorf(".recfs decode: %q", info["decode"])
		}
		r := runCmd(t, "grep", "-rl", `"label": \[7\]`, dm)
		var found []string
		for _, l := range strings.Fields(r.stdout) {
			found = append(found, filepath.Base(l))
		}
		sort.Strings(found)
		var want []string
		for i := 7; i < n; i += 10 {
			want = append(want, fmt.Sprintf("%06d", i))
		}
		if r.code != 0 || strings.Join(found, " ") != strings.Join(want, " ") {
			t.Fatalf("grep -rl '\"label\": \\[7\\]': %v (exit %d, %s); want %v", found, r.code, r.stderr, want)
		}
	})
}

// TestDecodeManifestSummaryMount: in a directory mount of a database with
// --decode auto, the MANIFEST's record directory serves the live state as
// .recfs-summary: read by name, never listed, so grep -r over the mount
// sees records only; .recfs names it.
func TestDecodeManifestSummaryMount(t *testing.T) {
	needFUSE(t)
	db, _ := writeGoleveldbDB(t, 50)
	ms, _ := filepath.Glob(filepath.Join(db, "MANIFEST-*"))
	if len(ms) != 1 {
		t.Fatalf("MANIFESTs %v", ms)
	}
	eachBackend(t, func(t *testing.T, backend string) {
		mnt := newMountDir(t)
		startMount(t, db, mnt, "--backend", backend, "--decode", "auto")
		md := filepath.Join(mnt, filepath.Base(ms[0]))
		sum, err := os.ReadFile(filepath.Join(md, ".recfs-summary"))
		if err != nil || !strings.HasPrefix(string(sum), "live edits=") || !strings.Contains(string(sum), "live comparator=leveldb.BytewiseComparator\n") {
			t.Fatalf(".recfs-summary: %q, %v", sum, err)
		}
		fi, err := os.Stat(filepath.Join(md, ".recfs-summary"))
		if err != nil || fi.Size() != int64(len(sum)) {
			t.Fatalf("stat .recfs-summary: %v, %v (read %d bytes)", fi, err, len(sum))
		}
		ents, err := os.ReadDir(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() == ".recfs-summary" {
				t.Fatalf("%s lists .recfs-summary", md)
			}
		}
		if r := runCmd(t, "grep", "-rl", "live comparator", mnt); strings.Contains(r.stdout, ".recfs-summary") {
			t.Fatalf("grep -r finds the summary: %q", r.stdout)
		}
		info := infoLines(t, filepath.Join(md, ".recfs"))
		if !strings.HasPrefix(strings.Join(info["decode"], ""), "manifest (auto:") || !strings.HasPrefix(strings.Join(info["decode summary"], ""), ".recfs-summary") {
			t.Errorf(".recfs: %v", info)
		}
	})
}

// TestDecodeMisfitMount: a decoder that does not fit a file's records
// (--decode batch on Examples) answers EIO for the record, however often
// asked, and logs one line naming it; the other records read as the
// decoder shows them or fail alike.
func TestDecodeMisfitMount(t *testing.T) {
	needFUSE(t)
	_, file := examples(t, 5)
	src := writeTemp(t, "ex.tfrecord", file)
	eachBackend(t, func(t *testing.T, backend string) {
		mnt := newMountDir(t)
		m := startMount(t, src, mnt, "--backend", backend, "--decode", "batch")
		for range 3 {
			_, err := os.ReadFile(filepath.Join(mnt, "000002"))
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("read of a misfit: %v, want EIO", err)
			}
		}
		if r := runCmd(t, "cat", filepath.Join(mnt, "000002")); r.code == 0 || !strings.Contains(r.stderr, "Input/output error") {
			t.Fatalf("cat: %d %q", r.code, r.stderr)
		}
		runRecfs(t, "unmount", mnt)
		m.wait(t)
		lines := regexp.MustCompile(`(?m)^.*level=error.*decode batch: record 2 at byte 8: count \d+ overruns the payload.*$`).FindAllString(m.stderr.String(), -1)
		if len(lines) != 1 {
			t.Fatalf("log lines about record 2: %q\nstderr:\n%s", lines, m.stderr)
		}
	})
}

// TestDecodeFollow: a WAL mounted decoded and followed shows a batch
// appended by another process, decoded.
func TestDecodeFollow(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		src := tempLog(t, "000005.log", [][]byte{codectest.PutBatch(1, "k1", "first value"), codectest.PutBatch(2, "k2", "second value")})
		mnt := newMountDir(t)
		startMount(t, src, mnt, "--follow", "--follow-interval", "20ms", "--no-cache", "--backend", backend, "--decode", "batch")
		in := writeTemp(t, "in", codectest.PutBatch(3, "user 17", "hello world"))
		if r := runRecfs(t, "append", src, in); r.code != 0 {
			t.Fatalf("recfs append: %d %s", r.code, r.stderr)
		}
		waitRecords(t, mnt, 3)
		want := "batch seq 3 count 1\nput user\\x2017 hello world\n"
		if b, err := os.ReadFile(filepath.Join(mnt, "000002")); err != nil || string(b) != want {
			t.Fatalf("appended batch: %q %v; want %q", b, err, want)
		}
		if r := runCmd(t, "grep", "-rl", "hello world", mnt); strings.TrimSpace(r.stdout) != filepath.Join(mnt, "000002") {
			t.Fatalf("grep -rl 'hello world': %q", r.stdout)
		}

		// A followed MANIFEST's summary follows its edits.
		man := filepath.Join(t.TempDir(), "MANIFEST-000001")
		recfile.WriteLog(t, man, [][]byte{[]byte("\x02\x03\x03\x05")}) // log-number 3, next-file 5
		mm := newMountDir(t)
		startMount(t, man, mm, "--follow", "--follow-interval", "20ms", "--no-cache", "--backend", backend, "--decode", "manifest")
		sum := filepath.Join(mm, ".recfs-summary")
		if b, err := os.ReadFile(sum); err != nil || !strings.Contains(string(b), "live next-file=000005\n") {
			t.Fatalf("summary: %q %v", b, err)
		}
		if err := os.WriteFile(in, []byte("\x03\x09"), 0o644); err != nil { // next-file 9
			t.Fatal(err)
		}
		if r := runRecfs(t, "append", man, in); r.code != 0 {
			t.Fatalf("recfs append: %d %s", r.code, r.stderr)
		}
		waitRecords(t, mm, 2)
		if b, err := os.ReadFile(sum); err != nil || !strings.Contains(string(b), "live next-file=000009\n") || !strings.HasPrefix(string(b), "live edits=2\n") {
			t.Fatalf("summary after an appended edit: %q %v", b, err)
		}
	})
}

// TestDecodeS3: objects in an S3 store mount decoded as local files do:
// an object and a prefix, by name and by auto.
func TestDecodeS3(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	_, file := examples(t, 40)
	srv.Put(t, "data/ex.tfrecord", file)
	wal, _ := recfile.LogBytes(t, [][]byte{codectest.PutBatch(9, "k", "v w")}, leveldb.WriterOptions{})
	srv.Put(t, "data/000009.log", wal)
	mnt, pm := newMountDir(t), newMountDir(t)
	startMount(t, vgw.URL("data/ex.tfrecord"), mnt, "--decode", "example")
	if b, err := os.ReadFile(filepath.Join(mnt, "000017")); err != nil || string(b) != exampleText(17) {
		t.Fatalf("s3 object decoded: %q %v", b, err)
	}
	startMount(t, vgw.URL("data/"), pm, "--decode", "auto")
	if b, err := os.ReadFile(filepath.Join(pm, "ex.tfrecord", "000003")); err != nil || string(b) != exampleText(3) {
		t.Fatalf("s3 prefix, Example: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(pm, "000009.log", "000000")); err != nil || string(b) != "batch seq 9 count 1\nput k v w\n" {
		t.Fatalf("s3 prefix, WAL: %q %v", b, err)
	}
}

// TestDecodeMountHelper: -o decode= in an fstab-style mount(8) command.
func TestDecodeMountHelper(t *testing.T) {
	needMountHelper(t)
	_, file := examples(t, 12)
	src := writeTemp(t, "ex.tfrecord", file)
	mnt := newMountDir(t)
	r := inMountNS(t, mnt, fmt.Sprintf("mount -t fuse.recfs %s %s -o ro,decode=example || exit 10\ncat %s/000011\numount %s\n", src, mnt, mnt, mnt))
	if r.code != 0 || !strings.Contains(r.stdout, exampleText(11)) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
