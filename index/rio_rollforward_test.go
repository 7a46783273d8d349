package index

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/recordio"
)

// TestRepairRollsForwardCompletedAppend: a crash after an append rewrote
// the trailer but before it removed its journal leaves a complete file;
// repair keeps the new items (the reference scanner already reads them) and
// removes the journal. A crash in the middle of the new blocks is rolled
// back to the original bytes.
func TestRepairRollsForwardCompletedAppend(t *testing.T) {
	for _, torn := range []bool{false, true} {
		t.Run(fmt.Sprint("torn=", torn), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.rio")
			var buf bytes.Buffer
			w, err := recordio.NewWriter(&buf, recordio.WriterOptions{Trailer: true})
			if err != nil {
				t.Fatal(err)
			}
			w.Append([]byte("old"))
			if err := w.SetTrailer([]byte("the trailer")); err != nil {
				t.Fatal(err)
			}
			w.Close()
			orig := buf.Bytes()
			recfile.WriteFile(t, path, orig)
			toff := int64(len(orig)) - rioChunk // the one-chunk trailer block
			a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Append([]byte("new one"), bytes.Repeat([]byte("n"), 70000)); err != nil {
				t.Fatal(err)
			}
			a.Close()
			full, _ := os.ReadFile(path)
			if torn {
				recfile.WriteFile(t, path, full[:toff+rioChunk+100]) // cut inside the new blocks
			}
			j := encodeJournal(int64(len(orig)), toff, orig[toff:])
			recfile.WriteFile(t, path+RecordIOJournalSuffix, j)
			if ok, err := RepairRecordIO(path); err != nil || !ok {
				t.Fatalf("repair: %v %v", ok, err)
			}
			if _, err := os.Stat(path + RecordIOJournalSuffix); !os.IsNotExist(err) {
				t.Fatalf("journal left behind: %v", err)
			}
			got, _ := os.ReadFile(path)
			want := full
			if torn {
				want = orig
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("repaired file has %d bytes, want %d (torn=%v)", len(got), len(want), torn)
			}
		})
	}
}
