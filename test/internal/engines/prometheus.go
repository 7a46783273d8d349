package engines

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Prometheus is a running Prometheus server that scrapes itself every
// second, its TSDB in Dir (the WAL in Dir/wal).
type Prometheus struct {
	Dir  string
	Addr string // host:port of its web interface
	p    *proc
}

// PromOptions configure StartPrometheus.
type PromOptions struct {
	// Compress turns on --storage.tsdb.wal-compression (snappy); the
	// default writes uncompressed records.
	Compress bool
}

// StartPrometheus starts Debian's prometheus on a loopback port, with the
// admin API (for deleting series: tombstones) and exemplar and native
// histogram storage on, and waits until it is ready. It is stopped when t
// ends; Stop stops it earlier.
func StartPrometheus(t testing.TB, o PromOptions) *Prometheus {
	t.Helper()
	bin := need(t, "prometheus", "prometheus")
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: self\n    static_configs:\n      - targets: ['%s']\n", addr)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	comp := "--no-storage.tsdb.wal-compression"
	if o.Compress {
		comp = "--storage.tsdb.wal-compression"
	}
	data := filepath.Join(dir, "data")
	p := start(t, bin, "--config.file="+cfg, "--storage.tsdb.path="+data, "--web.listen-address="+addr,
		"--web.enable-admin-api", "--enable-feature=exemplar-storage,native-histograms", comp)
	pr := &Prometheus{Dir: data, Addr: addr, p: p}
	p.waitFor(t, "prometheus ready", 60*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return pr
}

// Stop stops the server (SIGTERM, by pid) and waits for it; it then has
// closed its WAL.
func (p *Prometheus) Stop(t testing.TB) {
	t.Helper()
	if err := p.p.stop(); err != nil {
		t.Logf("prometheus ended with %v", err)
	}
}

// DeleteSeries asks the admin API to delete the series that match
// selector, which writes a tombstones record to the WAL.
func (p *Prometheus) DeleteSeries(t testing.TB, selector string) {
	t.Helper()
	u := "http://" + p.Addr + "/api/v1/admin/tsdb/delete_series?match[]=" + url.QueryEscape(selector)
	resp, err := http.Post(u, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("delete_series %s: %s", selector, resp.Status)
	}
}

// Seconds is how long PromWAL lets Prometheus scrape itself:
// $RECFS_PROM_SECONDS, else 60.
func Seconds() time.Duration {
	if s, err := strconv.Atoi(os.Getenv("RECFS_PROM_SECONDS")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 60 * time.Second
}

// RunPrometheus runs a Prometheus that scrapes itself every second for
// Seconds() (with WAL compression or without), deletes one series halfway
// (a tombstones record) and is stopped; it returns the server's wal/
// directory, which lives as long as t.
func RunPrometheus(t testing.TB, compress bool) string {
	t.Helper()
	p := StartPrometheus(t, PromOptions{Compress: compress})
	time.Sleep(Seconds() / 2)
	p.DeleteSeries(t, `{__name__="go_memstats_frees_total"}`)
	time.Sleep(Seconds() / 2)
	p.Stop(t)
	return filepath.Join(p.Dir, "wal")
}
