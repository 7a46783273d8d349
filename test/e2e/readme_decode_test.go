package e2e

import (
	"bufio"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/codec/tfrecord"
)

// readmeDecodeFiles are the files the README's "Decoding records"
// examples read: records as hex.
var readmeDecodeFiles = map[string][]string{
	"db/000042.log":      {"64000000000000000200000001097573657230303034320b68656c6c6f20776f726c640004676f6e65", "660000000000000001000000010a7573657220303030343302ff01"},
	"db/MANIFEST-000005": {"011a6c6576656c64622e4279746577697365436f6d70617261746f72020303050400", "0700066409610101000000000000097a002800000000000004280307", "060006070107960109610101000000000000097a0028000000000000"},
	"train.tfrecord": {
		"0a4e0a0e0a056c6162656c12051a030a01040a130a046e616d65120b0a090a07686f72736520300a160a06776569676874120c120a0a080000003f000000c00a0f0a046a70656712070a050a03ffd8ff",
		"0a4e0a0e0a056c6162656c12051a030a01070a130a046e616d65120b0a090a07686f72736520310a160a06776569676874120c120a0a080000003f000000c00a0f0a046a70656712070a050a03ffd8ff",
		"0a120a100a026964120a0a080a06636c69702d31121a0a180a056672616d65120f0a061a040a0201020a051a030a0103",
	},
	"orders.rio": {
		"0a036f2d31100218cf0f8001018a010e0a0374656111000000000000d03fa201090a0576696577731003c2010608a0a5c8b106",
	},
}

// TestReadmeDecodeExamples runs the recfs cat and info commands of the
// README's "Decoding records" section on the files they name and checks
// that their output is the one the README shows.
func TestReadmeDecodeExamples(t *testing.T) {
	dir := t.TempDir()
	for name, hexRecs := range readmeDecodeFiles {
		var recs [][]byte
		for _, h := range hexRecs {
			b, err := hex.DecodeString(h)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			recs = append(recs, b)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(name) {
		case ".tfrecord":
			var file []byte
			for _, r := range recs {
				file = tfrecord.AppendRecord(file, r)
			}
			recfile.WriteFile(t, p, file)
		case ".rio":
			recfile.WriteRIO(t, p, recs, recordio.WriterOptions{})
		default:
			recfile.WriteLog(t, p, recs)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "db/000042.log"))
	if err != nil {
		t.Fatal(err)
	}
	recfile.WriteFile(t, filepath.Join(dir, "wal-backup.bin"), b)
	proto, err := os.ReadFile(filepath.Join("..", "..", "codec", "pbdecode", "testdata", "shop.proto"))
	if err != nil {
		t.Fatal(err)
	}
	recfile.WriteFile(t, filepath.Join(dir, "shop.proto"), proto)
	item, _ := os.ReadFile(filepath.Join("..", "..", "codec", "pbdecode", "testdata", "item.proto"))
	recfile.WriteFile(t, filepath.Join(dir, "item.proto"), item)

	checked := 0
	for _, ex := range readmeDecodeBlocks(t) {
		cmd := exec.Command("sh", "-c", ex.cmd)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "XDG_CACHE_HOME="+t.TempDir())
		out, _ := cmd.CombinedOutput()
		if string(out) != ex.out {
			t.Errorf("README: $ %s\nshows:\n%s\nrecfs writes:\n%s", ex.cmd, ex.out, out)
		}
		checked++
	}
	if checked < 7 {
		t.Fatalf("%d README commands checked; the section has more", checked)
	}
}

// readmeExample is one "$ command" line of a README block and the output
// lines after it.
type readmeExample struct{ cmd, out string }

// readmeDecodeBlocks returns the recfs cat and info commands of the
// shell blocks of the README's "Decoding records" section that show
// output.
func readmeDecodeBlocks(t *testing.T) []readmeExample {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeExample
	in, block := false, false
	var cur *readmeExample
	flush := func() {
		if cur != nil && cur.out != "" && (strings.HasPrefix(cur.cmd, "recfs cat ") || strings.HasPrefix(cur.cmd, "recfs info ")) {
			out = append(out, *cur)
		}
		cur = nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "## "):
			in = strings.HasPrefix(l, "## Decoding records")
		case !in:
		case l == "```sh":
			block = true
		case block && l == "```":
			flush()
			block = false
		case block && strings.HasPrefix(l, "$ "):
			flush()
			cmd := l[2:]
			if i := strings.Index(cmd, "  #"); i >= 0 {
				cmd = strings.TrimSpace(cmd[:i])
			}
			cur = &readmeExample{cmd: cmd}
		case block && cur != nil:
			cur.out += l + "\n"
		}
	}
	return out
}
