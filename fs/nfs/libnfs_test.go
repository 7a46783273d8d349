package nfs

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/fusetest"
	"github.com/recfs/recfs/fs/serve/servetest"
)

// libnfsURL returns the libnfs URL of path on the server at l. libnfs
// takes what precedes the last slash as the export to mount: the export
// "/" makes URLs of the form nfs://host//path.
func libnfsURL(l net.Listener, path string) string {
	port := l.Addr().(*net.TCPAddr).Port
	return fmt.Sprintf("nfs://127.0.0.1/%s?version=3&nfsport=%d&mountport=%d", path, port, port)
}

// TestLibnfs: libnfs's nfs-ls and nfs-cat (Debian libnfs-utils, which
// CI installs) list and read the export; libnfs asks for the export list
// before it mounts.
func TestLibnfs(t *testing.T) {
	for _, tool := range []string{"nfs-ls", "nfs-cat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian package libnfs-utils; .ci/run installs it)", tool)
		}
	}
	t.Parallel()
	src := fusetest.NewMemSource(120, -1, nil)
	_, l := start(t, servetest.FileTree(t, src), Options{})
	out, err := exec.Command("nfs-ls", libnfsURL(l, "/")).CombinedOutput()
	if err != nil {
		t.Fatalf("nfs-ls: %v\n%s", err, out)
	}
	for n := int64(0); n < src.Len(); n++ {
		name := fs.RecordName(n, src.Len())
		if !bytes.Contains(out, []byte(" "+name+"\n")) {
			t.Fatalf("nfs-ls does not list %s:\n%s", name, out)
		}
	}
	for _, n := range []int64{0, 1, 96, 119} {
		out, err := exec.Command("nfs-cat", libnfsURL(l, "/"+fs.RecordName(n, src.Len()))).CombinedOutput()
		if err != nil || !bytes.Equal(out, fusetest.Payload(n)) {
			t.Fatalf("nfs-cat of record %d: %v, %d bytes, want %d: %.200q", n, err, len(out), len(fusetest.Payload(n)), out)
		}
	}
	out, _ = exec.Command("nfs-cat", libnfsURL(l, "/.recfs")).Output()
	if !strings.Contains(string(out), "records: 120") {
		t.Fatalf(".recfs through nfs-cat: %q", out)
	}
}
