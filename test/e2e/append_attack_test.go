package e2e

// An unprivileged user plants symlinks where root's `recfs append` writes
// its side files (the torn-tail backup, the recordio journal). Root must
// never write through them.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// rootSecret makes a 0600 root file in a private directory and returns its
// path and content.
func rootSecret(t *testing.T) (string, []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	content := []byte("ROOT-ONLY CONTENT\n")
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, content
}

// sharedDir makes a world-writable sticky directory (like /tmp) in dir.
func sharedDir(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o1777); err != nil {
		t.Fatal(err)
	}
	return p
}

// envWithout returns the environment without the named variables, plus add.
func envWithout(drop []string, add ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			keep = keep && k != d
		}
		if keep {
			out = append(out, kv)
		}
	}
	return append(out, add...)
}

// TestAttackTornBackupSymlink: root appends to a leveldb log with a torn
// tail with $HOME and $XDG_CACHE_HOME unset (a system service, say). The
// old fallback saved the tail under $TMPDIR/recfs/torn, where the attacker
// had planted a symlink to a root-only file. Now the append refuses (there
// is no private directory), and neither the target nor the log changes.
func TestAttackTornBackupSymlink(t *testing.T) {
	needAttacker(t)
	needBinary(t)
	dir := publicDir(t)
	tmp := sharedDir(t, dir, "tmp")
	victim := filepath.Join(dir, "victim.log")
	recfile.WriteLog(t, victim, [][]byte{[]byte("one"), []byte("two")})
	good, _ := os.ReadFile(victim)
	recfile.WriteLog(t, victim, [][]byte{[]byte("one"), []byte("two"), bytes.Repeat([]byte("T"), 70000)})
	whole, _ := os.ReadFile(victim)
	torn := whole[:len(good)+30000]
	if err := os.WriteFile(victim, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	target, content := rootSecret(t)
	plant := filepath.Join(tmp, "recfs", "torn", fmt.Sprintf("victim.log.%d-%d", len(good), len(torn)))
	if r := asAttacker(t, "sh", "-c", fmt.Sprintf("mkdir -p %s && ln -s %s %s", filepath.Dir(plant), target, plant)); r.code != 0 {
		t.Fatalf("attacker: %d %s", r.code, r.stderr)
	}
	c := exec.Command(bin, "append", victim, "-")
	c.Env = envWithout([]string{"HOME", "XDG_CACHE_HOME", "TMPDIR"}, "TMPDIR="+tmp)
	c.Stdin = strings.NewReader("new record")
	out, err := c.CombinedOutput()
	if got, _ := os.ReadFile(target); !bytes.Equal(got, content) {
		t.Fatalf("root's file overwritten through the planted symlink: %q…", got[:min(len(got), 24)])
	}
	if err == nil {
		t.Fatalf("append with no private directory for the torn tail succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "no private directory") {
		t.Errorf("unclear refusal: %s", out)
	}
	if got, _ := os.ReadFile(victim); !bytes.Equal(got, torn) {
		t.Fatalf("refused append changed the log (%d bytes, was %d)", len(got), len(torn))
	}
}

// TestAttackJournalSymlinkRace: while root appends to a recordio file with
// a trailer in a world-writable directory, the attacker keeps planting a
// symlink to a root-only file at the journal's name. No append writes
// through it: each either succeeds (its record is in the file) or fails
// leaving no trace, and the root file is untouched.
func TestAttackJournalSymlinkRace(t *testing.T) {
	uid, gid := needAttacker(t)
	needBinary(t)
	dir := sharedDir(t, publicDir(t), "shared")
	victim := filepath.Join(dir, "victim.rio")
	createForAppends(t, victim, appendKinds[1])
	target, content := rootSecret(t)
	journal := victim + ".recfs-journal"
	dur := soakDuration(3*time.Second, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), dur+30*time.Second)
	defer cancel()
	loop := fmt.Sprintf("while :; do ln -s %s %s 2>/dev/null; done", target, journal)
	att := exec.CommandContext(ctx, "sh", "-c", loop)
	att.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, NoSetGroups: true}}
	att.Dir = "/"
	if err := att.Start(); err != nil {
		t.Fatal(err)
	}
	stopAttacker := func() {
		_ = att.Process.Kill()
		_ = att.Wait()
	}
	defer stopAttacker()
	var outcomes []appendOutcome
	deadline := time.Now().Add(dur)
	for i := 0; time.Now().Before(deadline); i++ {
		key := fmt.Sprintf("item:%d", i)
		code, stderr := recfsAppend(ctx, victim, []byte(key+"|"), nil)
		outcomes = append(outcomes, appendOutcome{key, code, stderr})
		if got, _ := os.ReadFile(target); !bytes.Equal(got, content) {
			t.Fatalf("root's file overwritten through the planted journal symlink after %d appends: %q…", i+1, got[:min(len(got), 24)])
		}
	}
	stopAttacker()
	os.Remove(journal)
	checkOutcomes(t, outcomes, presentKeys(t, victim, appendKinds[1]), []string{"seed"}, false)
}

// craftJournal lays out a well-formed recfs recordio journal (magic, sizes,
// trailer block, CRC-32C) that would make a repair write block at off and
// cut the file just after it.
func craftJournal(off int64, block []byte) []byte {
	b := []byte("recfsJ1\n")
	b = binary.LittleEndian.AppendUint64(b, uint64(off)+uint64(len(block)))
	b = binary.LittleEndian.AppendUint64(b, uint64(off))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(block)))
	b = append(b, block...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// TestAttackForeignJournal: the attacker leaves a well-formed journal of
// their own next to root's recordio file, asking the repair to overwrite
// the file's body with their bytes. Root's next append ignores (and
// removes) it: every record and the trailer survive, no attacker byte lands.
func TestAttackForeignJournal(t *testing.T) {
	needAttacker(t)
	needBinary(t)
	pub := publicDir(t)
	dir := sharedDir(t, pub, "shared")
	victim := filepath.Join(dir, "victim.rio")
	createForAppends(t, victim, appendKinds[1])
	if code, stderr := recfsAppend(context.Background(), victim, []byte("second|"), nil); code != 0 {
		t.Fatal(stderr)
	}
	crafted := filepath.Join(pub, "crafted")
	evil := bytes.Repeat([]byte("EVIL"), 32768/4)
	if err := os.WriteFile(crafted, craftJournal(32768, evil), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := asAttacker(t, "cp", crafted, victim+".recfs-journal"); r.code != 0 {
		t.Fatalf("attacker: %d %s", r.code, r.stderr)
	}
	if code, stderr := recfsAppend(context.Background(), victim, []byte("third|"), nil); code != 0 {
		t.Fatalf("append next to a foreign journal: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(victim)
	if bytes.Contains(b, []byte("EVILEVIL")) {
		t.Fatal("the attacker's bytes are in root's file")
	}
	checkOutcomes(t, []appendOutcome{{"third", 0, ""}}, presentKeys(t, victim, appendKinds[1]), []string{"seed", "second"}, true)
}
