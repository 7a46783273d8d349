package interop

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/test/internal/tfrnode"
)

// nodeRead reads a TFRecord file of Example messages with
// @roboflow/tfrecords' TFRecordsReader.
func nodeRead(t testing.TB, file []byte) tfrnode.Examples {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.tfrecord")
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	return tfrnode.Read(t, p)
}
