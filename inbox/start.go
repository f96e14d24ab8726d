package inbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/inbox/index"
	"github.com/sandgate/sandgate/runtime"
)

// Starter starts a run of a blueprint from Options.Blueprints; Actions
// may implement it.
type Starter interface {
	// Start runs the blueprint name with inputs and labels
	// (checked) in runsDir, and returns the new run's directory once it
	// has started.
	Start(ctx context.Context, name string, inputs, labels map[string]string, runsDir, by string) (string, error)
}

// inputField is one form control generated from a blueprint input.
type inputField struct {
	Name, Label, Type, Pattern, Value, Description string
	Required                                       bool
}

type startPage struct {
	Name, Description string
	Fields            []inputField
	Problem           string
	// Labels is the form's labels field as given: NAME=VALUE lines.
	Labels     string
	Confirm    bool
	CSRF       string
	Blueprints []string
}

func (s *Server) starter() Starter {
	st, _ := s.opts.Actions.(Starter)
	if s.opts.Blueprints == nil {
		return nil
	}
	return st
}

// startable lists the names of the blueprints a person may start.
func (s *Server) startable() []string {
	if s.opts.Blueprints == nil {
		return nil
	}
	paths, _ := fs.Glob(s.opts.Blueprints, "*.yaml")
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.TrimSuffix(path.Base(p), ".yaml")
	}
	return out
}

// startableBlueprint parses one startable blueprint by a name from the list
// (never a path from the request).
func (s *Server) startableBlueprint(name string) (*blueprint.Blueprint, error) {
	if !slices.Contains(s.startable(), name) {
		return nil, fmt.Errorf("%w: no blueprint %q to start", index.ErrBadName, name)
	}
	src, err := fs.ReadFile(s.opts.Blueprints, name+".yaml")
	if err != nil {
		return nil, err
	}
	return blueprint.Parse(name+".yaml", src, blueprint.WithTypes(s.opts.Types))
}

// fieldsOf makes the form's controls from the blueprint's inputs, in file
// order, filled with given values or the defaults.
func fieldsOf(bp *blueprint.Blueprint, given url.Values) []inputField {
	var out []inputField
	for _, n := range bp.InputOrder {
		in := bp.Inputs[n]
		f := inputField{Name: n, Label: n, Description: in.Description, Pattern: in.Pattern, Type: "text",
			Required: in.Required && in.Default == nil}
		switch in.Type {
		case "int":
			f.Type = "number"
		case "bool":
			f.Type, f.Pattern = "text", "true|false"
		}
		if in.Default != nil {
			f.Value = fmt.Sprint(in.Default)
		}
		if v, ok := given["in."+n]; ok {
			f.Value = v[0]
		}
		out = append(out, f)
	}
	return out
}

func (s *Server) startList(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "start.html", startPage{Blueprints: s.startable()})
}

func (s *Server) startForm(w http.ResponseWriter, r *http.Request) {
	bp, err := s.startableBlueprint(r.PathValue("name"))
	if err != nil {
		notFound(w, err)
		return
	}
	s.render(w, r, "start.html", startPage{Name: r.PathValue("name"), Description: bp.Description, Fields: fieldsOf(bp, nil), CSRF: s.csrfToken(w, r)})
}

// start checks the form, shows what will run and asks to confirm, then
// starts the run and journals who started it.
func (s *Server) start(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	bp, err := s.startableBlueprint(name)
	if err != nil {
		notFound(w, err)
		return
	}
	st := s.starter()
	if st == nil || len(s.opts.RunsDirs) == 0 {
		http.Error(w, "inbox: this server cannot start runs", http.StatusNotImplemented)
		return
	}
	_ = r.ParseForm()
	inputs := map[string]string{}
	for k, v := range r.PostForm {
		if n, ok := strings.CutPrefix(k, "in."); ok && strings.TrimSpace(v[0]) != "" {
			inputs[n] = v[0]
		}
	}
	p := startPage{Name: name, Description: bp.Description, Fields: fieldsOf(bp, r.PostForm), CSRF: s.csrfToken(w, r),
		Labels: r.PostFormValue("labels")}
	asAny := make(map[string]any, len(inputs))
	for k, v := range inputs {
		asAny[k] = v
	}
	labels, lerr := parseLabels(p.Labels)
	if _, err := runtime.CheckInputs(bp, asAny); err != nil || lerr != nil {
		p.Problem = errors.Join(err, lerr).Error()
		w.WriteHeader(http.StatusBadRequest)
		s.render(w, r, "start.html", p)
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		p.Confirm = true
		s.render(w, r, "start.html", p)
		return
	}
	by := s.person(r)
	// The same confirmed form posted again while the first is starting
	// (a double click) would start the same run twice.
	same := url.Values{}
	for k, v := range inputs {
		same.Set(k, v)
	}
	key := "start\x00" + by + "\x00" + name + "\x00" + same.Encode() + "\x00" + p.Labels
	if _, busy := s.acting.LoadOrStore(key, true); busy {
		s.fail(w, r, http.StatusConflict, "start "+name, errors.New("the same run is being started already; it appears in the runs list when it has"), "/")
		return
	}
	defer s.acting.Delete(key)
	dir, err := st.Start(r.Context(), name, inputs, labels, s.opts.RunsDirs[0], by)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "start "+name+" failed", err, "/start/"+url.PathEscape(name))
		return
	}
	id := path.Base(dir)
	if d, oerr := openRun(s.opts.RunsDirs[0], id); oerr == nil {
		err = journalAction(d, actionRecord{Time: time.Now().UTC(), By: by, Action: "started " + name})
		d.Close()
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "journal the start of "+id, err, "/")
		return
	}
	s.index.Refresh()
	http.Redirect(w, r, "/run/0/"+url.PathEscape(id), http.StatusSeeOther)
}

// parseLabels reads the start form's labels: one NAME=VALUE a line,
// blank lines skipped, each checked as `sandgate run --label` checks it.
func parseLabels(text string) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, err := runtime.ParseLabel(line)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[k] = v
	}
	if err := runtime.CheckLabels(out); err != nil {
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}
