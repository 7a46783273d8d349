package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/test/internal/tfrnode"
)

// tfrCrashOptions are the index options of the TFRecord crash child and of
// the parent's repair: a private cache directory beside the file, where
// torn tails are saved.
func tfrCrashOptions(path string) index.Options {
	return index.Options{Writable: true, CacheDir: filepath.Join(filepath.Dir(path), "cache")}
}

// tfrCrashChild appends batches of crash items to the TFRecord file at path
// through index.Table.Append (synced), printing "count size" after each
// returned append, until killed or the deadline. Opening the file writable
// first repairs a torn tail a previous kill left.
func tfrCrashChild(path string, seed int64, start int, rng *rand.Rand, deadline time.Time) error {
	ctx := context.Background()
	tb, err := index.Open(ctx, path, tfrCrashOptions(path))
	if err != nil {
		return err
	}
	defer tb.Close()
	if tb.Len() < int64(start) {
		return fmt.Errorf("the file holds %d records, %d were acknowledged", tb.Len(), start)
	}
	i := int(tb.Len())
	for time.Now().Before(deadline) {
		k := 1 + rng.Intn(3)
		batch := make([][]byte, k)
		for j := range batch {
			batch[j] = crashItem(seed, i+j)
		}
		if _, err := tb.Append(ctx, batch, index.AppendOptions{Sync: true}); err != nil {
			return err
		}
		i += k
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(os.Stdout, "%d %d\n", i, st.Size()); err != nil {
			return err
		}
	}
	return nil
}

// TestCrashTFRecordAppend: a TFRecord file is appended to through
// index.Table.Append by a child SIGKILLed at random moments, and reopened
// writable by the next child (which repairs a torn tail). After each kill
// every acknowledged record is in the file, in order, exactly as written;
// at the end, after a writable open repaired the last kill's tail, the
// file is a clean TFRecord file that @roboflow/tfrecords' framing reads
// whole, and recfs's strict scan finds no damage.
func TestCrashTFRecordAppend(t *testing.T) {
	seed := testSeeds(t, 1)[0]
	rng := rand.New(rand.NewSource(seed))
	path := filepath.Join(t.TempDir(), "crash.tfrecord")
	initial := 1 + rng.Intn(5)
	var b []byte
	for i := range initial {
		b = tfrecord.AppendRecord(b, crashItem(seed, i))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	acked := ack{n: initial, end: int64(len(b))}
	total, torn := 0, 0
	for iter := range 10 {
		a := runAndKill(t, rng, "tfr", path, seed, acked.n, acked)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) < a.end {
			t.Fatalf("iteration %d: file has %d bytes, %d were acknowledged", iter, len(b), a.end)
		}
		s := tfrecord.NewScanner(bytes.NewReader(b), int64(len(b)), tfrecord.Options{})
		n, whole := 0, int64(0)
		for s.Next() {
			rec := s.Record()
			whole = rec.End()
			if !bytes.Equal(b[rec.DataOff():rec.DataOff()+rec.Len], crashItem(seed, n)) {
				t.Fatalf("iteration %d: record %d is not what was written", iter, n)
			}
			n++
		}
		if n < a.n {
			t.Fatalf("iteration %d: %d records, %d acknowledged (damage %v)", iter, n, a.n, s.Damage())
		}
		for _, d := range s.Damage() {
			if d.Off+d.Len != int64(len(b)) {
				t.Fatalf("iteration %d: damage %v before the end of the file", iter, d)
			}
			torn++
		}
		total += a.n - acked.n
		// A torn tail after the last whole record is not acknowledged:
		// the next child's writable open may cut it before it acks.
		acked = ack{n: n, end: whole}
	}
	// Repair what the last kill left, then read with the independent side.
	tb, err := index.Open(context.Background(), path, tfrCrashOptions(path))
	if err != nil {
		t.Fatal(err)
	}
	n := tb.Len()
	tb.Close()
	var res struct{ Count int64 }
	if err := json.Unmarshal(tfrnode.Run(t, "scan", path), &res); err != nil || res.Count != n || n < int64(acked.n) {
		t.Fatalf("after repair: @roboflow/tfrecords framing reads %d records (%v), recfs %d, %d acknowledged", res.Count, err, n, acked.n)
	}
	t.Logf("%d records acknowledged over 10 kills; %d kills left a torn tail", total, torn)
	if total == 0 {
		t.Error("no record was ever acknowledged: the test did not exercise anything")
	}
}
