package main

import (
	"fmt"
	"path/filepath"

	"github.com/recfs/recfs/test/internal/tbf"
	"github.com/recfs/recfs/test/internal/vgw"
)

// The s3-index-tbf rows are s3-index over a network-bound link: versitygw
// runs in a network namespace joined to this one by a veth pair whose
// namespace end has a token-bucket qdisc, so the store sends at the link's
// rate. On loopback a plain GET runs at memory speed (about 1.9 GB/s
// here) and is CPU-bound on two cores, where the build's scanning competes
// with the server; on a limited link both wait for the wire, which is
// what a store across a network looks like.

// tbfLink is one rate of the limited-link rows: its row, rate, and the
// object's size as a fraction of the scan size. At 1 Gbit/s the object is
// the 1 GiB (a GET takes 9 s; a row makes eight transfers, a
// warm-up round and three timed ones); at 200 Mbit/s a GET of 1 GiB would
// take 43 s, so the object is an eighth of it (5.4 s a transfer).
type tbfLink struct {
	id    string
	rate  int64 // bit/s
	share int64 // object = scanBytes / share
}

// tbfLinks are the limited-link rows, in order.
var tbfLinks = []tbfLink{
	{"s3-index-tbf", 1_000_000_000, 1},
	{"s3-index-tbf200", 200_000_000, 8},
}

// tbfIDs are the rows of tbfLinks.
func tbfIDs() []string {
	var ids []string
	for _, l := range tbfLinks {
		ids = append(ids, l.id)
	}
	return ids
}

// rateText prints a rate in bit/s: "1 Gbit/s", "200 Mbit/s".
func rateText(bits int64) string {
	if bits >= 1e9 && bits%1e9 == 0 {
		return fmt.Sprintf("%d Gbit/s", bits/1e9)
	}
	return fmt.Sprintf("%d Mbit/s", bits/1e6)
}

// s3IndexTBF sets up the limited link and a versitygw behind it, and
// measures the wanted rows of tbfLinks, one rate after the other (the
// qdisc is replaced between them). The namespace, veth pair and server go
// away on every path out, an interrupt included (run's context ends the
// rounds and these defers run).
func (b *bench) s3IndexTBF(dir string) {
	var want []tbfLink
	for _, l := range tbfLinks {
		if b.cfg.wants(l.id) {
			want = append(want, l)
		}
	}
	if len(want) == 0 {
		return
	}
	skip := func(why string) {
		for _, l := range want {
			b.add(tbfRow(l, 0, 0, b.selfCmd(l.id), why))
		}
	}
	if why := tbf.Missing(); why != "" {
		skip(why)
		return
	}
	link, err := tbf.Setup(tbf.Options{Rate: want[0].rate})
	if err != nil {
		skip(err.Error())
		return
	}
	defer link.Close()
	srv, err := vgw.StartServer(vgw.StartOptions{Root: filepath.Join(dir, "store-tbf"), Wrap: link.Command(), Host: link.NsIP})
	if err != nil {
		skip(err.Error())
		return
	}
	defer srv.Close()
	b.logf("  versitygw %s on %s in network namespace %s, veth %s ↔ %s", vgw.Version, srv.Endpoint, link.Netns, link.HostIP, link.NsIP)
	for _, l := range want {
		if b.ctx.Err() != nil {
			return
		}
		b.add(b.s3IndexOver(link, srv, dir, l))
	}
}

// s3IndexOver measures one row of tbfLinks: the link set to its rate, its
// object uploaded (uploads go towards the namespace, which is not limited),
// then the build and the plain GET alternated as in s3-index.
func (b *bench) s3IndexOver(link *tbf.Link, srv *vgw.Server, dir string, l tbfLink) Row {
	cmd := b.selfCmd(l.id)
	if err := link.SetRate(l.rate); err != nil {
		return tbfRow(l, 0, 0, cmd, err.Error())
	}
	q, err := link.Qdisc()
	if err != nil {
		return tbfRow(l, 0, 0, cmd, err.Error())
	}
	b.logf("  %s: %s", l.id, q)
	key := fmt.Sprintf("index-tbf-%d.log", l.share)
	size, n, err := b.putLog(srv, dir, key, b.cfg.scanBytes/l.share)
	if err != nil {
		return tbfRow(l, 0, 0, cmd, err.Error())
	}
	row := tbfRow(l, size, n, cmd, "")
	r, err := b.indexRounds(srv.Client, key, size, n)
	if err != nil {
		row.Skip = err.Error()
		return row
	}
	r.fill(&row, size)
	// The link is the bottleneck when the plain GET runs near its rate.
	wire := float64(l.rate) / 8 / 1e6
	row.Detail += fmt.Sprintf("; link: tbf %s = %.0f MB/s, the plain GET used %.0f%% of it (`%s`)", rateText(l.rate), wire, 100*row.PeerVal/wire, q)
	return row
}

// tbfRow is the row of l with its label; why != "" makes it not measured.
func tbfRow(l tbfLink, size int64, n int, cmd, why string) Row {
	what := "a leveldb log object"
	if size > 0 {
		what = fmt.Sprintf("a %s leveldb log object of %s-byte records (%s records)", humanBytes(size), humanCount(s3RecordSize), humanCount(n))
	}
	return Row{ID: l.id, Section: "S3", Unit: UnitMBps,
		Label: fmt.Sprintf("index build of %s over S3 across a %s link (versitygw in a network namespace, veth + tbf qdisc), in-process (`index.OpenSource`), target ≥ %.0f%% of the GET",
			what, rateText(l.rate), 100*s3IndexTarget),
		Peer: "one plain GET of the whole object to io.Discard over the same link", Limit: true, Cmd: cmd, Skip: why}
}
