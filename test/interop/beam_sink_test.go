package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/test/internal/tfrnode"
)

// beamBin builds recfs-beam from the beam module beside this one, or skips
// t when the module is not there. Its first build compiles the Beam Go SDK
// (minutes on two cores) unless `make lint` or `make beam` did.
func beamBin(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../beam")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Skipf("skipping: no beam module at %s: %v", dir, err)
	}
	bin := filepath.Join(t.TempDir(), "recfs-beam")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/recfs-beam")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build recfs-beam: %v\n%s", err, out)
	}
	return bin
}

// beamCopy writes recs into three TFRecord files and has `recfs-beam copy`
// (prism, 16 KiB ranges) copy them into one file of format to; it returns
// the copy's path and bytes, and the records recfs reads from the copy,
// which must be recs as a multiset.
func beamCopy(t *testing.T, bin, to string, f codec.Format, recs [][]byte) (string, []byte, [][]byte) {
	t.Helper()
	in := t.TempDir()
	for i := range 3 {
		part := recs[len(recs)*i/3 : len(recs)*(i+1)/3]
		if err := os.WriteFile(filepath.Join(in, fmt.Sprintf("part-%d.tfrecord", i)), tfrWrite(t, part), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "copy")
	cmd := exec.Command(bin, "--split-bytes", "16384", "--cache-dir", "-",
		"copy", filepath.Join(in, "part-*.tfrecord"), "--to", to, "--output", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("recfs-beam copy --to %s: %v\n%s", to, err, stderr.Bytes())
	}
	var sum struct{ Records, Restrictions int64 }
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout.Bytes(), err)
	}
	if sum.Records != int64(len(recs)) || sum.Restrictions <= 3 {
		t.Errorf("copy --to %s: summary %+v, want %d records in more than 3 ranges", to, sum, len(recs))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	mine, _ := recfsRecords(t, out, f)
	if d := diffRecords(sortedRecords(recs), sortedRecords(mine)); d != "" {
		t.Fatalf("recfs reading the %s copy, as a multiset of the input: %s", to, d)
	}
	return out, b, mine
}

// sortedRecords returns a sorted copy of recs: the sink writes the records
// of several ranges in no particular order, so a copy is compared with its
// input as a multiset.
func sortedRecords(recs [][]byte) [][]byte {
	return slices.SortedFunc(slices.Values(recs), bytes.Compare)
}

// TestBeamSinksReferenceReads: the files recfs-beam copy writes through
// recfsio.WriteLeveldbLog and WriteTFRecord are read by goleveldb's
// journal reader, pebble's record.Reader and @roboflow/tfrecords'
// TFRecordsReader, in the same order as recfs reads them, and hold every
// input record once.
func TestBeamSinksReferenceReads(t *testing.T) {
	bin := beamBin(t)
	t.Run("leveldb", func(t *testing.T) {
		rng := rand.New(rand.NewSource(28))
		recs := makeRecords(rng, leveldbSizeMix(rng, 400<<10, true))
		_, b, mine := beamCopy(t, bin, "leveldb", codec.LevelDB, recs)
		checkReferenceReadsLog(t, 28, "recfs-beam's", b, mine)
	})
	t.Run("tfrecord", func(t *testing.T) {
		want := tfrnode.MakeExamples(t, 90)
		recs := want.Records(t)
		p, b, mine := beamCopy(t, bin, "tfrecord", codec.TFRecord, recs)
		if d := diffRecords(mine, tfrScan(t, b)); d != "" {
			t.Errorf("recfs's scanner reading the copy: %s", d)
		}
		// Node reports features; record i of the input has k = "record-i".
		got := tfrnode.Read(t, p)
		at := map[string]int{}
		for i, r := range recs {
			at[string(r)] = i
		}
		if got.Count != len(mine) || len(got.K) != len(mine) {
			t.Fatalf("node read %d records, recfs %d", got.Count, len(mine))
		}
		for j, r := range mine {
			i := at[string(r)]
			if got.K[j] != want.K[i] || got.Blob[j] != want.Blob[i] || got.N[j] != want.N[i] {
				t.Fatalf("node record %d: k %q n %d, recfs reads input record %d (k %q n %d)", j, got.K[j], got.N[j], i, want.K[i], want.N[i])
			}
		}
	})
}
