package blueprint

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// The key tables of the format. The decoder accepts exactly these keys and
// JSONSchema describes exactly these (schemaProps panics on a key one has
// and the other lacks), so the schema cannot drift from the decoder.
var (
	topKeys     = []string{"version", "name", "description", "inputs", "budget", "sandbox", "start", "nodes"}
	topRequired = []string{"version", "name", "start", "nodes"}
	inputKeys   = []string{"description", "required", "type", "default", "pattern"}
	budgetKeys  = []string{"max_node_runs", "timeout", "tokens", "cost", "answers"}
	sandboxKeys = []string{"network", "allow_hosts", "env", "isolation", "disk", "image"}
	retryKeys   = []string{"max", "backoff"}
	edgeKeys    = []string{"to", "when", "max", "on_exhausted"}
	// plainEdgeKeys are edgeKeys without when, which only edges lists take.
	plainEdgeKeys = []string{"to", "max", "on_exhausted"}
	// commonNodeKeys are accepted on every node, whatever its type.
	commonNodeKeys = []string{"type", "description", "timeout", "retry", "needs", "next", "on_pass", "on_fail", "edges"}
	edgeNodeKeys   = []string{"next", "on_pass", "on_fail", "edges"}
)

// identRE is the shape of node ids and input names: they appear in
// expressions as outputs.<id> and inputs.<name>.
var identRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// decoder turns the YAML tree into a Blueprint, reporting as it goes.
type decoder struct {
	r     *reporter
	types TypeSet
	bp    *Blueprint
	// refs are node names written somewhere, checked once all nodes are known.
	refs  []ref
	exprs []pendingExpr
	// unsure holds nodes with a key that could not be read, whose edges
	// may be incomplete.
	unsure map[string]bool
	// suggested holds keys offered as "did you mean", so they are not also
	// reported missing.
	suggested map[string]bool
	// incomplete is set when an edge names a missing node, so the graph as
	// read is not the graph the author meant.
	incomplete bool
	// badIDs holds node ids already reported as malformed.
	badIDs map[string]bool
	// nodesRead is set once a nodes mapping was decoded.
	nodesRead bool
	// walked counts values visited by the template scan.
	walked int
	// envs caches expression environments by the nodes they name.
	envs map[string]*envSchema
	// startNode is where start was written.
	startNode *yaml.Node
	// argvRefs are the inputs argv templates name (see checkArgvRefs).
	argvRefs []argvRef
}

// pendingExpr is an expression or template to compile once every node's
// outputs are known.
type pendingExpr struct {
	node  *yaml.Node
	path  string
	edge  *Edge
	owner *Node
	field string
}

func (d *decoder) root(doc *yaml.Node) {
	top := d.entries(doc, "", topKeys)
	have := map[string]*yaml.Node{}
	for _, p := range top {
		have[p.key.Value] = p.value
	}
	for _, req := range topRequired {
		if have[req] == nil && !d.keyPresent(doc, req) && !d.suggested[req] {
			d.r.errorf(posOf(doc), req, "missing required key %q", req)
		}
	}
	for _, p := range top {
		d.topEntry(p)
	}
}

// keyPresent reports whether key exists at all (possibly rejected as a
// duplicate), so we do not also call it missing.
func (d *decoder) keyPresent(m *yaml.Node, key string) bool {
	m = resolveAlias(m)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

func (d *decoder) topEntry(p pair) {
	bp, v, path := d.bp, p.value, p.key.Value
	switch p.key.Value {
	case "version":
		if n, ok := d.integer(v, path, 0); ok && n != Version {
			d.r.errorf(posOf(v), path, "unknown version %d (this sandgate understands version %d)", n, Version)
		}
		bp.Version = Version
	case "name":
		bp.Name, _ = d.str(v, path)
	case "description":
		bp.Description, _ = d.str(v, path)
	case "start":
		if s, ok := d.str(v, path); ok {
			bp.Start = s
			d.startNode = v
		}
	case "inputs":
		d.inputs(v)
	case "budget":
		d.budget(v)
	case "sandbox":
		d.sandbox(v)
	case "nodes":
		d.nodes(v)
	}
}

func (d *decoder) inputs(n *yaml.Node) {
	for _, p := range d.entries(n, "inputs", nil) {
		name, path := p.key.Value, "inputs."+p.key.Value
		if !identRE.MatchString(name) {
			d.r.errorf(posOf(p.key), path, "input name %q must match [a-z][a-z0-9_]* so expressions can use it", name)
			continue
		}
		in := &Input{Name: name, Type: "string", Pos: posOf(p.key)}
		if p.value.Kind == yaml.ScalarNode && p.value.ShortTag() == "!!null" {
			d.addInput(in)
			continue
		}
		var def *yaml.Node
		for _, f := range d.entries(p.value, path, inputKeys) {
			fp := join(path, f.key.Value)
			switch f.key.Value {
			case "description":
				in.Description, _ = d.str(f.value, fp)
			case "required":
				in.Required, _ = d.boolean(f.value, fp)
			case "type":
				if t, ok := d.str(f.value, fp); ok {
					if !contains([]string{"string", "int", "bool"}, t) {
						d.r.errorf(posOf(f.value), fp, "unknown input type %q (use string, int or bool)%s", t, didYouMean(t, []string{"string", "int", "bool"}))
					} else {
						in.Type = t
					}
				}
			case "default":
				def = f.value
			case "pattern":
				d.inputPattern(in, f.value, fp)
			}
		}
		if in.Pattern != "" && in.Type != "string" {
			d.r.errorf(in.Pos, path+".pattern", "pattern applies to string inputs; %s is a %s", name, in.Type)
		}
		if def != nil {
			in.Default = d.inputDefault(in, def, path+".default")
			if err := in.CheckValue(in.Default); err != nil && in.Type == "string" {
				d.r.errorf(posOf(def), path+".default", "the default %q does not match the pattern %s", in.Default, in.Pattern)
			}
		}
		d.addInput(in)
	}
}

// inputPattern compiles an input's pattern; string inputs only.
func (d *decoder) inputPattern(in *Input, v *yaml.Node, path string) {
	p, ok := d.str(v, path)
	if !ok {
		return
	}
	re, err := compilePattern(p)
	if err != nil {
		d.r.errorf(posOf(v), path, "invalid regular expression: %v", err)
		return
	}
	in.Pattern, in.pattern = p, re
}

func (d *decoder) addInput(in *Input) {
	d.bp.Inputs[in.Name] = in
	d.bp.InputOrder = append(d.bp.InputOrder, in.Name)
}

func (d *decoder) inputDefault(in *Input, v *yaml.Node, path string) any {
	if in.Required {
		d.r.errorf(posOf(v), path, "a required input cannot have a default")
	}
	switch in.Type {
	case "int":
		n, _ := d.integer(v, path, -1<<31)
		return n
	case "bool":
		b, _ := d.boolean(v, path)
		return b
	default:
		s, _ := d.str(v, path)
		return s
	}
}

func (d *decoder) budget(n *yaml.Node) {
	b := &d.bp.Budget
	b.Pos = posOf(n)
	for _, p := range d.entries(n, "budget", budgetKeys) {
		path := "budget." + p.key.Value
		switch p.key.Value {
		case "max_node_runs":
			b.MaxNodeRuns, _ = d.integer(p.value, path, 1)
		case "timeout":
			b.Timeout, _ = d.duration(p.value, path)
		case "tokens":
			b.Tokens, _ = d.integer(p.value, path, 1)
		case "cost":
			if c, ok := d.float(p.value, path); ok && c <= 0 {
				d.r.errorf(posOf(p.value), path, "must be more than 0 (USD), got %s", p.value.Value)
			} else {
				b.Cost = c
			}
		case "answers":
			if n, ok := d.integer(p.value, path, 0); ok {
				b.Answers = n
			}
		}
	}
}

func (d *decoder) sandbox(n *yaml.Node) {
	s := &d.bp.Sandbox
	s.Pos = posOf(n)
	var hostsNode *yaml.Node
	for _, p := range d.entries(n, "sandbox", sandboxKeys) {
		path := "sandbox." + p.key.Value
		switch p.key.Value {
		case "network":
			s.Network = d.enum(p.value, path, []string{"none", "allowlist"})
		case "isolation":
			s.Isolation = d.enum(p.value, path, []string{"full", "none"})
		case "disk":
			s.Disk, _ = d.size(p.value, path)
		case "image":
			if v, ok := d.str(p.value, path); ok {
				s.Image, s.ImagePos = v, posOf(p.value)
				if msg := imageProblem(v); msg != "" {
					d.r.errorf(posOf(p.value), path, "%s", msg)
				}
			}
		case "allow_hosts":
			hostsNode = p.value
			s.AllowHosts, _ = d.strList(p.value, path)
			for i, h := range s.AllowHosts {
				if !hostRE.MatchString(h) {
					d.r.errorf(itemPos(p.value, i), fmt.Sprintf("%s[%d]", path, i), "%q is not a host name (write example.com, *.example.com or example.com:443)", h)
				}
			}
		case "env":
			s.Env, _ = d.strList(p.value, path)
			for i, e := range s.Env {
				s.EnvPos = append(s.EnvPos, itemPos(p.value, i))
				if !envRE.MatchString(e) {
					d.r.errorf(itemPos(p.value, i), fmt.Sprintf("%s[%d]", path, i), "%q is not an environment variable name", e)
				}
			}
		}
	}
	if s.Network == "" {
		s.Network = "none"
	}
	if s.Isolation == "" {
		s.Isolation = "full"
	}
	if len(s.AllowHosts) > 0 && s.Network != "allowlist" {
		d.r.errorf(posOf(hostsNode), "sandbox.allow_hosts", "allow_hosts has no effect unless network is allowlist")
	}
	if s.Network == "allowlist" && len(s.AllowHosts) == 0 {
		d.r.errorf(s.Pos, "sandbox.network", "network allowlist needs at least one entry in allow_hosts")
	}
	if s.Image != "" && s.Isolation == "none" {
		d.r.errorf(s.ImagePos, "sandbox.image", "an image needs a box; isolation: none runs commands on the host, with its tools")
	}
}

// imageRE is sandbox.image's syntax, as skopeo and podman spell images;
// a registry image must pin its digest (a tag can move). The image
// package reads the rest when the run starts.
var imageRE = regexp.MustCompile(`^(oci:.+|docker-archive:.+|docker://[^@\s]+@sha256:[0-9a-f]{64})$`)

// imageProblem says what is wrong with a sandbox.image value, or "".
func imageProblem(v string) string {
	switch {
	case imageRE.MatchString(v):
		return ""
	case strings.HasPrefix(v, "docker://") && !strings.Contains(v, "@sha256:"):
		return fmt.Sprintf("%q is not pinned: a registry image must name its digest (docker://REF@sha256:<64 hex digits>)", v)
	}
	return fmt.Sprintf("%q is not an image: write oci:DIR[:TAG], docker-archive:FILE or docker://REF@sha256:<64 hex digits>", v)
}

var (
	hostRE = regexp.MustCompile(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]{1,5})?$`)
	envRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// itemPos is the position of the i-th item of a list node, or of the node.
func itemPos(n *yaml.Node, i int) Pos {
	n = resolveAlias(n)
	if n.Kind == yaml.SequenceNode && i < len(n.Content) {
		return posOf(n.Content[i])
	}
	return posOf(n)
}

func (d *decoder) enum(n *yaml.Node, path string, allowed []string) string {
	s, ok := d.str(n, path)
	if !ok {
		return ""
	}
	if !contains(allowed, s) {
		d.r.errorf(posOf(n), path, "must be one of %v, got %q%s", allowed, s, didYouMean(s, allowed))
		return ""
	}
	return s
}

// sortedKeys returns a map's keys in order, for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
