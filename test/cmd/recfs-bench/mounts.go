package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// mounts tracks every mount this run made, so each is undone on every exit
// path (normal, error, signal).
type mounts struct {
	b      *bench
	mu     sync.Mutex
	active map[string]string // mountpoint -> how to unmount it
}

// fsKind is one file system under test in the mount rows.
type fsKind struct {
	Name    string // row label: "recfs gofuse", "tmpfs", "squashfuse", "fuse-zip"
	mount   string // shell command that mounts it ("" for tmpfs: a plain directory)
	unmount string // shell command that unmounts it
	Dir     string // where its records are
	src     string // the file it serves, read into the page cache before a first pass ("" for tmpfs)
}

// isMounted reports whether mountinfo lists mnt.
func isMounted(mnt string) bool {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && unescapeMountinfo(fields[4]) == mnt {
			return true
		}
	}
	return false
}

// unescapeMountinfo decodes the octal escapes mountinfo uses for spaces and
// such in paths.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// up mounts k (if it is a mount) and remembers how to take it down.
func (m *mounts) up(k fsKind) error {
	if k.mount == "" {
		return nil
	}
	if err := os.MkdirAll(k.Dir, 0o755); err != nil {
		return err
	}
	if isMounted(k.Dir) {
		m.down(k.Dir)
	}
	m.mu.Lock()
	m.active[k.Dir] = k.unmount
	m.mu.Unlock()
	if _, err := m.b.sh(k.mount); err != nil {
		m.down(k.Dir)
		return err
	}
	for i := 0; i < 100 && !isMounted(k.Dir); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !isMounted(k.Dir) {
		m.down(k.Dir)
		return fmt.Errorf("%s: not mounted after %q", k.Dir, k.mount)
	}
	return nil
}

// down unmounts mnt with its own command, then falls back to fusermount
// and a lazy umount, and waits for it to leave mountinfo.
func (m *mounts) down(mnt string) {
	m.mu.Lock()
	cmd := m.active[mnt]
	delete(m.active, mnt)
	m.mu.Unlock()
	tries := []string{cmd, "fusermount3 -u " + shellQuote(mnt), "fusermount -u " + shellQuote(mnt), "umount -l " + shellQuote(mnt)}
	for _, t := range tries {
		if t == "" || !isMounted(mnt) {
			continue
		}
		// Cleanup must work after the run was cancelled: no b.ctx here.
		_ = runDetached(t, 30*time.Second)
		for i := 0; i < 40 && isMounted(mnt); i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if isMounted(mnt) {
		m.b.logf("WARNING: %s is still mounted", mnt)
	}
}

// downAll unmounts everything still mounted.
func (m *mounts) downAll() {
	m.mu.Lock()
	var all []string
	for mnt := range m.active {
		all = append(all, mnt)
	}
	m.mu.Unlock()
	for _, mnt := range all {
		m.down(mnt)
	}
}

// remount is the shell command that takes k down and up again, dropping
// the page cache in between when drop is set, else reading k's source into
// it (on this machine DAMON pages out page cache idle for a minute, so
// "the source in the page cache" has to be made so, not assumed).
func (b *bench) remount(k fsKind, drop bool) string {
	var parts []string
	if k.mount != "" {
		parts = append(parts, k.unmount)
	}
	if drop {
		parts = append(parts, dropCachesCmd)
	} else if k.src != "" {
		parts = append(parts, "cat "+shellQuote(k.src)+" > /dev/null")
	}
	if k.mount != "" {
		parts = append(parts, k.mount)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ")
}
