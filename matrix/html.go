package matrix

import (
	"html/template"
	"os"
	"path/filepath"
	"strings"
)

// The grid: one row per combination of every axis but the last, one
// column per value of the last (the seed, when it is an axis). Each cell
// links to its run's report.html, else its result.json, else the cell's
// log (a run that could not start writes neither page).
var page = template.Must(template.New("matrix").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>vigil matrix {{.Name}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; }
th { background: #f4f4f4; font-weight: 600; }
td.v { text-align: center; min-width: 4em; }
td.v a { color: inherit; text-decoration: none; display: block; }
.pass { background: #c8e6c9; } .fail { background: #ef9a9a; font-weight: 600; }
.unknown { background: #fff59d; } .error { background: #ffcc80; } .notrun { background: #eee; color: #888; }
code { background: #f4f4f4; padding: 0 3px; }
</style></head><body>
<h1>vigil matrix <code>{{.Name}}</code></h1>
<p>{{len .Cells}} cells:{{range .Counts}} <span class="{{.Class}}">&nbsp;{{.N}} {{.Verdict}}&nbsp;</span>{{end}}</p>
<table>
<tr>{{range .RowAxes}}<th>{{.}}</th>{{end}}{{range .Columns}}<th>{{$.ColAxis}}={{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .Values}}<td>{{.}}</td>{{end}}{{range .Cells}}<td class="v {{.Class}}" title="{{.Title}}">{{if .Href}}<a href="{{.Href}}">{{.Word}}</a>{{else}}{{.Word}}{{end}}</td>{{end}}</tr>
{{end}}</table>
{{if .Clusters}}<h2>Failures by check</h2>
<table><tr><th>check</th><th>cells</th></tr>
{{range .Clusters}}<tr><td><code>{{.Check}}</code></td><td>{{range .Cells}}<a href="{{.Href}}" title="{{.Title}}">{{.Index}}</a> {{end}}</td></tr>
{{end}}</table>{{end}}
<p>Every cell is one <code>vigil run</code>; hover a cell for its command line. Re-run one with the command in its <code>cell.json</code>.</p>
</body></html>
`))

type htmlCell struct {
	Index                    int
	Class, Word, Title, Href string
}

type htmlRow struct {
	Values []string
	Cells  []htmlCell
}

func (m *Matrix) writeHTML(path string) error {
	names := m.Spec.AxisNames()
	colAxis := names[len(names)-1]
	columns := m.Spec.Axes[colAxis]
	cells := make([]htmlCell, len(m.Cells))
	for i, c := range m.Cells {
		cells[i] = htmlCell{Index: i, Class: class(c.Verdict), Word: word(c.Verdict),
			Title: c.Label + "\nvigil " + strings.Join(c.Args, " "), Href: link(filepath.Dir(path), c)}
		if c.Reason != "" {
			cells[i].Title += "\n" + c.Reason
		}
	}
	// The last axis varies fastest, so a row is len(columns) cells in a row.
	var rows []htmlRow
	for start := 0; start < len(cells); start += len(columns) {
		var values []string
		for _, p := range m.Cells[start].Params[:len(names)-1] {
			values = append(values, orNone(p.Value))
		}
		rows = append(rows, htmlRow{Values: values, Cells: cells[start : start+len(columns)]})
	}
	type count struct {
		Verdict, Class string
		N              int
	}
	var counts []count
	for _, v := range Verdicts {
		if n := m.Counts[v]; n > 0 {
			counts = append(counts, count{v, class(v), n})
		}
	}
	type cluster struct {
		Check string
		Cells []htmlCell
	}
	var clusters []cluster
	for _, cl := range m.Clusters {
		c := cluster{Check: cl.Check}
		for _, i := range cl.Cells {
			c.Cells = append(c.Cells, cells[i])
		}
		clusters = append(clusters, c)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return page.Execute(f, map[string]any{"Name": m.Name, "Cells": m.Cells, "Counts": counts, "RowAxes": names[:len(names)-1],
		"ColAxis": colAxis, "Columns": columns, "Rows": rows, "Clusters": clusters})
}

// link is the page of a cell's run, relative to the matrix's dir.
func link(dir string, c Cell) string {
	if c.Dir == "" {
		return ""
	}
	for _, f := range []string{"run/report.html", "run/result.json", "vigil.log"} {
		if _, err := os.Stat(filepath.Join(dir, c.Dir, f)); err == nil {
			return filepath.ToSlash(filepath.Join(c.Dir, f))
		}
	}
	return ""
}

func class(verdict string) string {
	switch verdict {
	case "pass", "fail", "unknown", "error":
		return verdict
	}
	return "notrun"
}

func word(verdict string) string {
	if verdict == NotRun {
		return "–"
	}
	return strings.ToUpper(verdict)
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}
