// Package draw lays out the run page's two pictures as plain data for
// SVG templates (no inline style, so the page's CSP holds): a blueprint's
// graph in ranks, top to bottom, and a waterfall of spans on one time
// axis. It knows nothing of runs or journals.
package draw
