#include "cli/usage.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "cli/flags.hpp"

namespace posenc::cli {

namespace {

// `text` with each line after the first indented by `indent` columns.
std::string continued(std::string_view text, std::size_t indent) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == '\n') out.append(indent, ' ');
  }
  return out;
}

// Flag help lines: the label from column 2, the text from column 32 (or three columns after a
// longer label).
constexpr std::size_t help_label_width = 28;
constexpr std::size_t help_text_column = 32;

std::string help_label(const flag& f, const help_line& h) {
  std::string label(f.name);
  if (!h.metavar.empty()) {
    label += ' ';
    label += h.metavar;
  } else if (f.value.kind == value_kind::choice) {
    label += ' ';
    label += join_names(f.value.names, "|", "|");
  }
  return label;
}

void append_help_lines(std::string& s, help_section section) {
  struct line {
    std::string label;
    std::string_view text;
  };
  std::vector<line> lines;
  bool previous_in_section = false;
  for (const flag& f : flags()) {
    if (f.section == help_section::same_line && previous_in_section) {
      lines.back().label += ", " + help_label(f, f.help);
      continue;
    }
    previous_in_section = f.section == section;
    if (!previous_in_section) continue;
    lines.push_back({help_label(f, f.help), f.help.text});
  }
  for (const line& l : lines) {
    s += "  " + l.label;
    if (!l.text.empty()) {
      const std::size_t width =
          l.label.size() <= help_label_width ? help_text_column - 2 - l.label.size() : 3;
      s.append(width, ' ');
      s += continued(l.text, help_text_column);
    }
    s += '\n';
  }
}

}  // namespace

std::string usage_text() {
  std::string s;
  for (const command_info& c : commands()) {
    const std::string lead = std::string(c.id == commands().front().id ? "usage: " : "       ") +
                             "posenc " + std::string(c.name) + ' ';
    s += lead + continued(c.synopsis, lead.size()) + '\n';
  }
  s += "       posenc help COMMAND | COMMAND --help   (its flags, defaults and examples)\n"
       "       posenc --help | --version\n\nCommands:\n";
  // The name from column 2, the description from column 10 (or two columns after a longer name).
  for (const command_info& c : commands()) {
    if (c.starts_group) s += '\n';
    s += "  " + std::string(c.name);
    s.append(c.name.size() <= 6 ? 8 - c.name.size() : 2, ' ');
    s += continued(c.description, 10) + '\n';
    if (!c.note.empty()) s += "  " + std::string(c.note) + '\n';
  }
  s += "\nConfig (flags override the fields of --preset, --hf-config or --gguf, wherever they "
       "appear):\n";
  append_help_lines(s, help_section::config);
  s += "\nRun:\n";
  append_help_lines(s, help_section::run);
  s += "\nErrors: one line on stderr and nothing on stdout; exit 1 for an invalid configuration or "
       "input\nfile, 2 for a usage error, 3 when `check` finds a law that fails.\n";
  return s;
}

std::string command_help(const command_info& c) {
  const std::string lead = "usage: posenc " + std::string(c.name) + ' ';
  std::string s = lead + continued(c.synopsis, lead.size()) + "\n\n";
  s += std::string(c.description) + "\n";
  if (c.groups & static_cast<std::uint8_t>(flag_group::rope))
    s +=
        "\n[config]: --preset, --hf-config or --gguf and the RoPE flags below (flags override the\n"
        "fields of the preset or file)\n";
  s += "\nFlags (default; example):\n";
  for (const flag& f : flags()) {
    if (!takes_flag(c, f.name)) continue;
    // The command's own help line for the flag, where it has one (sinusoidal's --layout).
    help_line h = f.help;
    if (const command_flag* own = own_flag(c, f.name)) {
      if (!own->help.empty()) h.text = own->help;
      if (!own->metavar.empty()) h.metavar = own->metavar;
    }
    const std::string label = help_label(f, h);
    s += "  " + label;
    std::string text(h.text);
    if (text.empty()) text = "(as the flag before)";
    const std::size_t width =
        label.size() <= help_label_width ? help_text_column - 2 - label.size() : 3;
    s.append(width, ' ');
    s += continued(text, help_text_column) + '\n';
    s.append(help_text_column, ' ');
    s += "default: " + std::string(flag_default(c, f.name)) + "; e.g. " +
         std::string(flag_example(c, f.name)) + '\n';
  }
  s += "\nSee docs/cli.md (\"Vocabulary\") and man posenc.\n";
  return s;
}

}  // namespace posenc::cli
