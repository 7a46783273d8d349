package httpserve

// pageTemplates are the browse pages: a layout and one body per page.
const pageTemplates = `
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="robots" content="noindex,nofollow">
<title>{{.Title}} — recfs</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{background:#24303f;color:#fff;padding:.6em 1em;display:flex;flex-wrap:wrap;gap:1em;align-items:center}
header a{color:#cfe3ff;text-decoration:none}header a:hover{text-decoration:underline}
.crumbs{font-family:ui-monospace,monospace;font-size:15px}
form.search{margin-left:auto;display:flex;gap:.4em;align-items:center}
form.search input[type=search]{width:22em;padding:.25em .4em}
main{padding:1em;max-width:1200px}
table{border-collapse:collapse;background:#fff;width:100%}
th,td{padding:.2em .6em;border-bottom:1px solid #e3e6ea;text-align:left;vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.damage td{background:#fde8e8;color:#8a1c1c;font-weight:600}
.kv td:first-child{color:#5a6573;white-space:nowrap}
pre{background:#fff;border:1px solid #e3e6ea;padding:.6em;overflow:auto;white-space:pre-wrap;word-break:break-all}
pre.hex{white-space:pre;font-size:12px}
.pager{margin:.6em 0;display:flex;gap:1em}
.muted{color:#5a6573}.err{color:#8a1c1c;font-weight:600}
h2{font-size:16px;margin:1.2em 0 .4em}
.hit{font-family:ui-monospace,monospace;font-size:13px;white-space:pre-wrap;word-break:break-all;border-bottom:1px solid #eceef1;padding:.15em 0}
.hit a{color:#0b57b0}mark{background:#ffe08a}
</style></head><body>
<header><span class="crumbs">{{range $i, $c := .Crumbs}}{{if gt $i 1}} / {{end}}<a href="{{$c.Href}}">{{$c.Name}}</a>{{end}}</span>
<form class="search" method="get" action="{{.DirHref}}">
<input type="search" name="search" value="{{.Search.Pattern}}" placeholder="grep -rE pattern" aria-label="search">
<label><input type="checkbox" name="fixed" value="1"{{if .Search.Fixed}} checked{{end}}> fixed</label>
<label><input type="checkbox" name="icase" value="1"{{if .Search.Icase}} checked{{end}}> ignore case</label>
<label><input type="checkbox" name="decoded" value="1"{{if .Search.Decoded}} checked{{end}}> decoded</label>
<button type="submit">Search</button></form></header><main>
{{end}}

{{define "foot"}}</main></body></html>
{{end}}

{{define "pager"}}{{if or .Prev .Next}}<div class="pager">
{{if .First}}<a href="{{.First}}">« first</a> <a href="{{.Prev}}">‹ previous</a>{{end}}
<span class="muted">entries {{.From}}–{{.To}} of {{.Total}}</span>
{{if .Next}}<a href="{{.Next}}">next ›</a> <a href="{{.Last}}">last »</a>{{end}}</div>{{end}}{{end}}

{{define "dir"}}{{template "head" .}}
{{if .Info}}<h2>Record file</h2><table class="kv">{{range .Info}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>{{end}}
{{if .Damage}}<h2 class="err">{{len .Damage}} damaged or stale range(s)</h2><table>
<tr><th class="num">offset</th><th class="num">length</th><th>reason</th></tr>
{{range .Damage}}<tr class="damage"><td class="num">{{.Offset}}</td><td class="num">{{.Length}}</td><td>{{if .Stale}}stale tail: {{end}}{{.Reason}}</td></tr>{{end}}</table>{{end}}
<h2>{{if eq .Kind "records"}}Records{{else}}Entries{{end}}</h2>
{{template "pager" .}}
<table id="entries"><tr><th>name</th><th class="num">size</th>{{if eq .Kind "records"}}<th class="num">record</th><th class="num">offset</th>{{end}}<th>modified</th><th></th></tr>
{{range .Rows}}{{if .Damage}}<tr class="damage"><td colspan="6">damaged range at offset {{.Damage.Offset}}, {{.Damage.Length}} bytes: {{.Damage.Reason}}</td></tr>
{{else}}<tr><td><a href="{{if .ViewHref}}{{.ViewHref}}{{else}}{{.Href}}{{end}}">{{.Name}}{{if ne .Type "file"}}/{{end}}</a></td><td class="num">{{.Size}}</td>{{if .Record}}<td class="num">{{.Record}}</td><td class="num">{{if .Offset}}{{.Offset}}{{end}}</td>{{else if eq $.Kind "records"}}<td></td><td></td>{{end}}<td class="muted">{{.Mtime}}{{if .Error}} <span class="err">{{.Error}}</span>{{end}}</td><td>{{if .ViewHref}}<a href="{{.Href}}">raw</a>{{end}}</td></tr>
{{end}}{{end}}</table>
{{template "pager" .}}
{{if .Err}}<p class="err">{{.Err}}</p>{{end}}
{{template "foot" .}}{{end}}

{{define "file"}}{{template "head" .}}
<h2>{{.Kind}} {{.Name}}</h2>
<p>{{.Size}} bytes{{if .IsRecord}} · record {{.Record}}{{if .Offset}} at offset {{.Offset}}{{end}}{{end}} ·
<a href="{{.RawHref}}">raw bytes</a>{{if .PrevHref}} · <a href="{{.PrevHref}}">‹ previous record</a>{{end}}{{if .NextHref}} · <a href="{{.NextHref}}">next record ›</a>{{end}}</p>
{{if .Decoder}}<h2>Decoded ({{.Decoder}})</h2>{{if .DecodeErr}}<p class="err">{{.DecodeErr}}</p>{{end}}<pre id="decoded">{{.Decoded}}</pre>{{if .DecodedCut}}<p class="muted">(cut)</p>{{end}}
{{else if .DecodeErr}}<h2>Decoded</h2><p class="muted">{{.DecodeErr}}</p>{{end}}
<h2>Text</h2><pre id="text">{{.Text}}</pre>{{if .TextCut}}<p class="muted">(first 64 KiB)</p>{{end}}
<h2>Hex{{if .HexAt}} from offset {{.HexAt}}{{end}}</h2><pre class="hex" id="hex">{{.Hex}}</pre>{{if .HexMore}}<p><a href="{{.HexMore}}">more »</a></p>{{end}}
{{template "foot" .}}{{end}}

{{define "searchhead"}}{{template "head" .}}<h2>Search {{if .Search.Fixed}}for the string{{else}}for{{end}} <code>{{.Search.Pattern}}</code>{{if .Search.Decoded}} in decoded records{{end}}</h2><div id="hits">
{{end}}
{{define "hit"}}<div class="hit"><a href="{{.Href}}">{{.Path}}</a>:{{.Line}}: {{.Before}}<mark>{{.Match}}</mark>{{.After}}</div>
{{end}}
{{define "searchfoot"}}</div><p class="muted" id="done">{{.}}</p></main></body></html>
{{end}}
`
