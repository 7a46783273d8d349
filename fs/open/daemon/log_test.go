package daemon

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// TestCappedLogRotates: a daemon's log file that reaches its cap moves to
// .1 and writing goes on in a fresh file; a writer whose file another
// daemon rotated first moves on without rotating again (the other's .1
// survives).
func TestCappedLogRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	open := func() *os.File {
		f, err := openLogFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a := &cappedLog{path: path, out: open(), errFD: -1, cap: 120}
	b := &cappedLog{path: path, out: open(), errFD: -1, cap: 120}
	line := []byte(strings.Repeat("x", 39) + "\n") // 40 bytes
	for i := 0; i < 2; i++ {
		if _, err := a.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Write([]byte("b wrote this before the cap\n")); err != nil {
		t.Fatal(err)
	}
	// 125 bytes would pass the cap of 120: a rotates.
	if _, err := a.Write([]byte("a after rotation\n")); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if len(old) != 108 || !bytes.Contains(old, []byte("b wrote this")) {
		t.Errorf(".1 holds %d bytes %q; want the 108 written before the cap", len(old), old)
	}
	if string(cur) != "a after rotation\n" {
		t.Errorf("fresh log holds %q", cur)
	}
	// b's descriptor still names the rotated file (now over the cap): b
	// moves on to the fresh file and leaves .1 alone.
	if _, err := b.Write([]byte("b after rotation\n")); err != nil {
		t.Fatal(err)
	}
	old2, _ := os.ReadFile(path + ".1")
	cur, _ = os.ReadFile(path)
	if !bytes.Equal(old, old2) {
		t.Errorf(".1 changed by the second writer: %q", old2)
	}
	if string(cur) != "a after rotation\nb after rotation\n" {
		t.Errorf("fresh log holds %q", cur)
	}
}

// TestOpenLogRotatesFull: a log file at its cap when a daemon starts
// is moved to .1 first; a smaller one is appended to.
func TestOpenLogRotatesFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	if err := os.WriteFile(path, []byte("small\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, got, err := OpenLog(path, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got != path {
		t.Errorf("log path %q; want %q", got, path)
	}
	if _, err := os.Stat(path + ".1"); !os.IsNotExist(err) {
		t.Errorf("a small log was rotated: %v", err)
	}
	if err := os.WriteFile(path, bytes.Repeat([]byte("y"), logCap), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _, err = OpenLog(path, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("new start\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Stat(path + ".1"); err != nil || fi.Size() != logCap {
		t.Errorf(".1 after opening a full log: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new start\n" {
		t.Errorf("log after rotation holds %q", b)
	}
}

// listenSyslog makes a fake system log socket and points envSyslog at it.
func listenSyslog(t *testing.T) *net.UnixConn {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "log")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	t.Setenv(envSyslog, sock)
	return c
}

// readDatagram returns the next datagram on c (failing after 5 s).
func readDatagram(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 4096)
	n, err := c.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[:n])
}

// TestDaemonLogDefault: by default a daemon logs to the system log
// when one listens, else to daemon.log in the state directory.
func TestDaemonLogDefault(t *testing.T) {
	state := t.TempDir()
	o := LogOptions{Dir: func() (string, error) { return filepath.Join(state, "recfs"), nil }, Name: "daemon.log"}
	listenSyslog(t)
	f, where, err := OpenLog("", o)
	if err != nil || where != Syslog {
		t.Fatalf("with a system log: %q %v; want %q", where, err, Syslog)
	}
	f.Close()
	t.Setenv(envSyslog, filepath.Join(state, "no-such-socket"))
	f, where, err = OpenLog("", o)
	if err != nil || where != filepath.Join(state, "recfs", "daemon.log") {
		t.Fatalf("without a system log: %q %v", where, err)
	}
	f.Close()
	// Asked for by name, the missing system log is an error.
	if _, _, err := OpenLog(Syslog, o); err == nil || !strings.Contains(err.Error(), "no system log") {
		t.Errorf("--log-file syslog without one: %v", err)
	}
	if _, where, err := OpenLog("-", o); err != nil || where != "" {
		t.Errorf("--log-file -: %q %v", where, err)
	}
}

// TestSyslogHook: entries reach the system log at their level's priority
// (facility daemon), tagged recfs, with their fields and no timestamp of
// logrus's own.
func TestSyslogHook(t *testing.T) {
	c := listenSyslog(t)
	w, err := dialSyslog()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	l := logrus.New()
	l.SetOutput(new(bytes.Buffer))
	l.AddHook(newSyslogHook(w, l))
	l.WithField("mountpoint", "/mnt/x").Warn("something odd")
	got := readDatagram(t, c)
	// <28>: facility daemon (3) * 8 + warning (4).
	for _, want := range []string{"<28>", "recfs[", `msg="something odd"`, "mountpoint=/mnt/x"} {
		if !strings.Contains(got, want) {
			t.Errorf("syslog line %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "time=") {
		t.Errorf("syslog line %q carries logrus's timestamp", got)
	}
	l.Info("fine")
	if got := readDatagram(t, c); !strings.HasPrefix(got, "<30>") {
		t.Errorf("info line %q; want priority <30>", got)
	}
}
