package e2e

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/test/internal/tfrnode"
)

// TestTFRecordMount mounts a TFRecord file of Example messages made by
// @roboflow/tfrecords, on both backends: every record file reads back
// exactly, records appended through the --rw mount (written by a program,
// and copied in with cp) land in the file, and the independent reader then reads the
// whole file — old records and new — with every feature intact. A torn
// tail left in the source is saved aside and cut off by the --rw mount, not
// glued to the appended records.
func TestTFRecordMount(t *testing.T) {
	needFUSE(t)
	ex := tfrnode.MakeExamples(t, 40)
	recs := ex.Records(t)
	base, more := recs[:30], recs[30:]
	eachBackend(t, func(t *testing.T, backend string) {
		var file []byte
		for _, r := range base {
			file = tfrecord.AppendRecord(file, r)
		}
		torn := tfrecord.AppendRecord(nil, bytes.Repeat([]byte("T"), 1000))[:500]
		src, mnt, m, names := mountRW(t, backend, "data.tfrecord", append(file, torn...), len(base))
		for i, name := range names {
			got, err := os.ReadFile(filepath.Join(mnt, name))
			if err != nil || !bytes.Equal(got, base[i]) {
				t.Fatalf("record %s: %d bytes, %v", name, len(got), err)
			}
		}
		// Appends: each Example through a created file, the last copied
		// in with cp.
		for i, r := range more[:len(more)-1] {
			if err := os.WriteFile(filepath.Join(mnt, "new"+string(rune('a'+i))), r, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		big := writeTemp(t, "big", more[len(more)-1])
		sh(t, "cp "+big+" "+filepath.Join(mnt, "big"))
		if n := len(recordNames(t, mnt)); n != len(recs) {
			t.Fatalf("%d record files after the appends, want %d", n, len(recs))
		}
		unmountAndWait(t, m)
		got := tfrnode.Read(t, src)
		if got.Count != len(recs) || !reflect.DeepEqual(got.K, ex.K) || !reflect.DeepEqual(got.Blob, ex.Blob) || !reflect.DeepEqual(got.N, ex.N) {
			t.Fatalf("@roboflow/tfrecords reads %d records of the appended file, want %d", got.Count, len(recs))
		}
		r := runRecfs(t, "info", "--json", "--no-cache", src)
		if r.code != 0 || !bytes.Contains([]byte(r.stdout), []byte(`"format": "tfrecord"`)) || !bytes.Contains([]byte(r.stdout), []byte(`"damage": []`)) {
			t.Fatalf("recfs info: %d %s %s", r.code, r.stdout, r.stderr)
		}
	})
}

// TestTFRecordMountGzip mounts a GZIP-compressed TFRecord file written by
// @roboflow/tfrecords (then gzipped) on both backends and reads every
// record, forward and then backward (each backward read decompresses from
// the checkpoint before its record); an append through a --rw mount fails
// and leaves the file byte-identical.
func TestTFRecordMountGzip(t *testing.T) {
	needFUSE(t)
	ex := tfrnode.MakeExamples(t, 25)
	recs := ex.Records(t)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(tfrnode.Build(t, recs))
	zw.Close()
	eachBackend(t, func(t *testing.T, backend string) {
		src, mnt, m, names := mountRW(t, backend, "data.tfrecord.gz", z.Bytes(), len(recs))
		for _, order := range []string{"forward", "backward"} {
			for k := range names {
				i := k
				if order == "backward" {
					i = len(names) - 1 - k
				}
				got, err := os.ReadFile(filepath.Join(mnt, names[i]))
				if err != nil || !bytes.Equal(got, recs[i]) {
					t.Fatalf("%s: record %s: %d bytes, %v", order, names[i], len(got), err)
				}
			}
		}
		if err := os.WriteFile(filepath.Join(mnt, "new"), []byte("refused"), 0o644); err == nil {
			t.Error("an append to a compressed TFRecord file succeeded")
		}
		unmountAndWait(t, m)
		if b, err := os.ReadFile(src); err != nil || !bytes.Equal(b, z.Bytes()) {
			t.Fatalf("the refused append changed the file (%v)", err)
		}
	})
}

// mountRW writes data as the file name in a temporary folder and mounts it
// read-write (no saved index) on backend. It returns the file, the mount
// folder, the mount and the mount's record files in name order, and fails
// the test unless there are want of them.
func mountRW(t *testing.T, backend, name string, data []byte, want int) (string, string, *mount, []string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mnt := newMountDir(t)
	m := startMount(t, src, mnt, "--rw", "--no-cache", "--backend", backend)
	names := recordNames(t, mnt)
	sort.Strings(names)
	if len(names) != want {
		t.Fatalf("%d record files, want %d", len(names), want)
	}
	return src, mnt, m, names
}
