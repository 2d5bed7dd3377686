#include "support/check.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>

namespace posenc_test {

Report::Report(std::string name) : name_(std::move(name)) {}

void Report::add_violation(std::string text) {
  ++violations_;
  if (first_.size() < kKeep) first_.push_back(text);
  if (recent_.size() < kKeep) {
    recent_.push_back(std::move(text));
  } else {
    ++recent_dropped_;
  }
}

std::string Report::take_recent() {
  std::string out;
  for (const auto& line : recent_) out += "  " + name_ + ": " + line + "\n";
  if (recent_dropped_ > 0) out += "  ... and " + std::to_string(recent_dropped_) + " more\n";
  recent_.clear();
  recent_dropped_ = 0;
  return out;
}

std::string Report::first_violations() const {
  std::string out;
  for (const auto& line : first_) out += "  " + name_ + ": " + line + "\n";
  return out;
}

namespace {

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

}  // namespace

void UlpReport::print() const {
  if (count_ == 0) return;
  std::ostringstream os;
  os << "[accuracy] " << name_ << ": " << count_ << " args, max error " << fixed(max_, 4)
     << " ulp (" << worst_ << "), " << violations_ << " above " << fixed(bound_, 1) << " ulp"
     << (with_extra_ ? " + the argument's own term" : "") << "\n";
  std::cout << os.str() << std::flush;
}

void RoundReport::print() const {
  if (count_ == 0) return;
  std::ostringstream os;
  os << "[accuracy] " << name_ << ": " << count_ << " args, " << not_cr_
     << " not correctly rounded, " << near_ << " near a midpoint (within " << log2_str(residue_)
     << " relative; " << near_differs_ << " of them rounded the other way), max error "
     << fixed(max_, 4) << " ulp\n";
  std::cout << os.str() << std::flush;
}

void DdReport::print() const {
  if (count_ == 0) return;
  std::ostringstream os;
  os << "[accuracy] " << name_ << ": " << count_ << " args, max relative error "
     << log2_str(max_rel_);
  if (tiny_ > 0.0) os << " (results >= " << log2_str(tiny_) << ")";
  if (!worst_rel_.empty()) os << " (" << worst_rel_ << ")";
  if (abs_bound_ > 0.0)
    os << ", max absolute error " << log2_str(max_abs_) << " (" << worst_abs_ << ")";
  os << ", " << violations_ << " above " << log2_str(rel_bound_) << " relative";
  if (abs_bound_ > 0.0) os << " and " << log2_str(abs_bound_) << " absolute";
  if (not_normalized_ > 0) os << " (" << not_normalized_ << " not normalized)";
  os << "\n";
  std::cout << os.str() << std::flush;
}

bool DdReport::is_normalized(double hi, double lo) {
  const double s = hi + lo;
  return s == hi || (std::isnan(s) && std::isnan(hi));
}

}  // namespace posenc_test
