package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeRefusals (not parallel: run sets the process's logger).
func TestServeRefusals(t *testing.T) {
	src := writeTestLog(t, []string{"a", "b"})
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"serve"}, exitUsage, "missing protocol"},
		{[]string{"serve", "ftp", src}, exitUsage, `unknown protocol "ftp"`},
		{[]string{"serve", "http"}, exitUsage, "accepts 1 arg"},
		{[]string{"serve", "nfs", "--user", "u", src}, exitUsage, "unknown flag: --user"},
		{[]string{"serve", "http", "--user", "u", src}, exitUsage, "--user needs --pass"},
		{[]string{"serve", "http", "--pass", "p", src}, exitUsage, "--pass goes with --user"},
		{[]string{"serve", "http", "--user", "u", "--pass", "p", "--htpasswd", "f", src}, exitUsage, "give one"},
		{[]string{"serve", "webdav", "--tls-cert", "c.pem", src}, exitUsage, "--tls-cert and --tls-key go together"},
		{[]string{"serve", "http", "--addr", "0.0.0.0:0", src}, exitFailure, "--insecure-allow-anyone"},
		{[]string{"serve", "nfs", "--addr", ":0", src}, exitFailure, "reachable from other machines"},
		{[]string{"serve", "http", "--decode", "nosuch", src}, exitUsage, "nosuch"},
		{[]string{"serve", "http", src + ".missing"}, exitFailure, "no such file"},
	} {
		r := recfs(t, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.says) {
			t.Errorf("%q: exit %d %q, want %d and %q", c.args, r.code, r.stderr, c.code, c.says)
		}
	}
}

// TestServeStartsAndStops: serve prints its start-up line, answers, and
// returns 0 once its context ends (what SIGTERM does).
func TestServeStartsAndStops(t *testing.T) {
	src := writeTestLog(t, []string{"first", "second"})
	for _, proto := range []string{"http", "webdav", "nfs"} {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"serve", proto, "--json", src}, pw, io.Discard)
			pw.Close()
		}()
		line, err := bufio.NewReader(pr).ReadString('\n')
		var st struct{ Status, Protocol, URL, Addr string }
		if err != nil || json.Unmarshal([]byte(line), &st) != nil || st.Status != "serving" || st.Protocol != proto {
			cancel()
			t.Fatalf("%s: start-up line %q: %v", proto, line, err)
		}
		go func() { _, _ = io.Copy(io.Discard, pr) }()
		switch proto {
		case "nfs":
			port := st.Addr[strings.LastIndexByte(st.Addr, ':')+1:]
			if want := "nfs://127.0.0.1//?version=3&nfsport=" + port + "&mountport=" + port; st.URL != want {
				t.Errorf("nfs url %q, want %q", st.URL, want)
			}
		default:
			resp, err := http.Get(st.URL + "1")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "second" || st.URL != "http://"+st.Addr+"/" {
				t.Errorf("%s: GET %s1: %q", proto, st.URL, b)
			}
		}
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("%s: exit %d after the context ended", proto, code)
		}
	}
}
