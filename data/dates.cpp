#include "seqgrad/data/dates.h"

#include <array>
#include <iterator>
#include <stdexcept>
#include <unordered_set>

#include "seqgrad/data/random.h"

namespace seqgrad {

namespace {

struct DateFormat {
    const char* name;
    const char* pattern;
};

// The exercise's formats first (in its order; "long" and "MMMM d, YYY" write the same string,
// as they do there), then forms without commas, with weekdays, numeric and ordinal forms.
constexpr DateFormat kFormats[] = {
    {"short", "M/d/YY"},
    {"medium", "MMM d, YYY"},
    {"long", "MMMM d, YYY"},
    {"full", "EEEE, MMMM d, YYY"},
    {"d MMM YYY", "d MMM YYY"},
    {"d MMMM YYY", "d MMMM YYY"},
    {"dd MMM YYY", "dd MMM YYY"},
    {"d MMM, YYY", "d MMM, YYY"},
    {"d MMMM, YYY", "d MMMM, YYY"},
    {"dd, MMM YYY", "dd, MMM YYY"},
    {"d MM YY", "d MM YY"},
    {"MMMM d YYY", "MMMM d YYY"},
    {"MMMM d, YYY", "MMMM d, YYY"},
    {"dd.MM.YY", "dd.MM.YY"},
    {"MMM d YYY", "MMM d YYY"},
    {"EEEE MMMM d YYY", "EEEE MMMM d YYY"},
    {"EEEE, MMMM d YYY", "EEEE, MMMM d YYY"},
    {"EEEE d MMMM YYY", "EEEE d MMMM YYY"},
    {"EEEE, d MMMM YYY", "EEEE, d MMMM YYY"},
    {"EEE, d MMM YYY", "EEE, d MMM YYY"},
    {"EEE, MMM d, YYY", "EEE, MMM d, YYY"},
    {"MMMM do, YYY", "MMMM do, YYY"},
    {"do MMMM YYY", "do MMMM YYY"},
    {"the do of MMMM, YYY", "the do of MMMM, YYY"},
    {"YYY/MM/dd", "YYY/MM/dd"},
    {"YYY-MM-dd", "YYY-MM-dd"},
    {"MM/dd/YYY", "MM/dd/YYY"},
    {"M/d/YYY", "M/d/YYY"},
    {"MM/dd/YY", "MM/dd/YY"},
    {"dd.MM.YYY", "dd.MM.YYY"},
    {"d.M.YYY", "d.M.YYY"},
    {"dd MM YYY", "dd MM YYY"},
};
constexpr size_t kNumFormats = sizeof(kFormats) / sizeof(kFormats[0]);

constexpr std::array<const char*, 12> kMonths = {"january",   "february", "march",    "april",
                                                 "may",       "june",     "july",     "august",
                                                 "september", "october",  "november", "december"};
constexpr std::array<const char*, 7> kWeekdays = {"monday", "tuesday",  "wednesday", "thursday",
                                                  "friday", "saturday", "sunday"};

// Two-digit years: strptime's %y reads 69..99 as 19xx and 00..68 as 20xx.
constexpr int kFirstTwoDigitYear = 1969;
constexpr int kLastTwoDigitYear = 2068;

// Pattern fields, longest first so that "MMMM" is not read as "MM" "MM".
constexpr std::array<std::string_view, 11> kFields = {"EEEE", "EEE", "MMMM", "MMM", "MM", "M",
                                                      "dd",   "do",  "d",    "YYY", "YY"};

const DateFormat& find_format(std::string_view name) {
    for (const auto& format : kFormats) {
        if (name == format.name) return format;
    }
    throw std::invalid_argument("unknown date format \"" + std::string(name) + "\"");
}

bool uses_two_digit_year(std::string_view pattern) {
    // "YY" not followed by a third "Y".
    for (size_t i = 0; i + 1 < pattern.size(); ++i) {
        if (pattern.compare(i, 3, "YYY") == 0) {
            i += 2;
        } else if (pattern.compare(i, 2, "YY") == 0) {
            return true;
        }
    }
    return false;
}

std::string two_digits(int value) {
    return std::string(1, static_cast<char>('0' + value / 10)) +
           static_cast<char>('0' + value % 10);
}

// 1st 2nd 3rd 4th ... 11th 12th 13th ... 21st 22nd 23rd ... 31st
std::string ordinal(int day) {
    const char* suffix = "th";
    if (day / 10 != 1) {
        if (day % 10 == 1) suffix = "st";
        if (day % 10 == 2) suffix = "nd";
        if (day % 10 == 3) suffix = "rd";
    }
    return std::to_string(day) + suffix;
}

std::string render_field(std::string_view field, const Date& date) {
    const std::string month = kMonths[static_cast<size_t>(date.month - 1)];
    if (field == "EEEE" || field == "EEE") {
        const std::string weekday = kWeekdays[static_cast<size_t>(day_of_week(date))];
        return field == "EEEE" ? weekday : weekday.substr(0, 3);
    }
    if (field == "MMMM") return month;
    if (field == "MMM") return month.substr(0, 3);
    if (field == "MM") return two_digits(date.month);
    if (field == "M") return std::to_string(date.month);
    if (field == "dd") return two_digits(date.day);
    if (field == "do") return ordinal(date.day);
    if (field == "d") return std::to_string(date.day);
    if (field == "YYY") return std::to_string(date.year);
    return two_digits(date.year % 100);  // "YY"
}

std::string render(std::string_view pattern, const Date& date) {
    std::string out;
    size_t pos = 0;
    while (pos < pattern.size()) {
        bool matched = false;
        for (std::string_view field : kFields) {
            if (pattern.compare(pos, field.size(), field) == 0) {
                out += render_field(field, date);
                pos += field.size();
                matched = true;
                break;
            }
        }
        if (!matched) out.push_back(pattern[pos++]);  // a literal character
    }
    return out;
}

bool is_leap_year(int year) {
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int days_in_month(int year, int month) {
    constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap_year(year) ? 29 : kDays[month - 1];
}

}  // namespace

bool is_valid_date(const Date& date) {
    return date.month >= 1 && date.month <= 12 && date.day >= 1 &&
           date.day <= days_in_month(date.year, date.month);
}

// Howard Hinnant's days_from_civil: count in 400-year eras of 146097 days, with years starting
// on 1 march so that the leap day is the last day of the year.
int64_t days_since_epoch(const Date& date) {
    const int64_t y = date.year - (date.month <= 2 ? 1 : 0);
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t year_of_era = y - era * 400;  // [0, 399]
    const int64_t m = date.month;
    const int64_t day_of_year = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + date.day - 1;  // [0, 365]
    const int64_t day_of_era =
        year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;  // [0, 146096]
    return era * 146097 + day_of_era - 719468;
}

Date date_from_days(int64_t days) {
    days += 719468;
    const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    const int64_t day_of_era = days - era * 146097;
    const int64_t year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    const int64_t day_of_year =
        day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    const int64_t mp = (5 * day_of_year + 2) / 153;
    const int64_t day = day_of_year - (153 * mp + 2) / 5 + 1;
    const int64_t month = mp < 10 ? mp + 3 : mp - 9;
    const int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
    return Date{static_cast<int>(year), static_cast<int>(month), static_cast<int>(day)};
}

int day_of_week(const Date& date) {
    // 1970-01-01 was a thursday (3 with monday = 0).
    const int64_t d = days_since_epoch(date);
    return static_cast<int>(((d % 7) + 7 + 3) % 7);
}

std::string to_iso(const Date& date) {
    std::string year = std::to_string(date.year);
    while (year.size() < 4) year.insert(year.begin(), '0');
    return year + "-" + two_digits(date.month) + "-" + two_digits(date.day);
}

std::vector<std::string> date_format_names() {
    std::vector<std::string> names;
    for (const auto& format : kFormats) names.emplace_back(format.name);
    return names;
}

std::string date_format_pattern(std::string_view format_name) {
    return find_format(format_name).pattern;
}

bool date_format_accepts_year(std::string_view format_name, int year) {
    if (year < kFirstDateYear || year > kLastDateYear) return false;
    if (!uses_two_digit_year(find_format(format_name).pattern)) return true;
    return year >= kFirstTwoDigitYear && year <= kLastTwoDigitYear;
}

std::string format_date(const Date& date, std::string_view format_name) {
    const DateFormat& format = find_format(format_name);
    if (!is_valid_date(date)) {
        throw std::invalid_argument("invalid date " + std::to_string(date.year) + "-" +
                                    std::to_string(date.month) + "-" + std::to_string(date.day));
    }
    if (!date_format_accepts_year(format_name, date.year)) {
        throw std::invalid_argument("date format \"" + std::string(format_name) +
                                    "\" cannot write the year " + std::to_string(date.year));
    }
    return render(format.pattern, date);
}

std::vector<SentencePair> generate_dates(size_t n, uint64_t seed) {
    SplitMix64 rng(seed);
    std::vector<SentencePair> pairs;
    pairs.reserve(n);
    std::unordered_set<std::string> seen;
    // Each format writes one string per day, and the formats together write millions of
    // distinct strings; a request near that many would take long to fill by rejection.
    const size_t max_draws = 100 * n + 1000;
    for (size_t draws = 0; pairs.size() < n; ++draws) {
        if (draws == max_draws) {
            throw std::runtime_error("generate_dates: could not draw " + std::to_string(n) +
                                     " distinct dates (" + std::to_string(pairs.size()) +
                                     " found)");
        }
        const DateFormat& format = kFormats[rng.below(kNumFormats)];
        const bool two_digit = uses_two_digit_year(format.pattern);
        const int first_year = two_digit ? kFirstTwoDigitYear : kFirstDateYear;
        const int last_year = two_digit ? kLastTwoDigitYear : kLastDateYear;
        const int64_t first_day = days_since_epoch(Date{first_year, 1, 1});
        const int64_t last_day = days_since_epoch(Date{last_year, 12, 31});
        const Date date = date_from_days(
            first_day +
            static_cast<int64_t>(rng.below(static_cast<uint64_t>(last_day - first_day + 1))));
        std::string source = render(format.pattern, date);
        if (!seen.insert(source).second) continue;
        pairs.push_back(SentencePair{std::move(source), to_iso(date), 0});
    }
    return pairs;
}

DateSplits make_date_splits(size_t n_train, size_t n_valid, size_t n_test, uint64_t seed) {
    std::vector<SentencePair> all = generate_dates(n_train + n_valid + n_test, seed);
    // Consecutive slices of one list of distinct sources: disjoint by construction.
    auto take = [&all](size_t first, size_t count) {
        const auto begin =
            std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(first));
        return std::vector<SentencePair>(begin, begin + static_cast<std::ptrdiff_t>(count));
    };
    DateSplits splits;
    splits.train = take(0, n_train);
    splits.valid = take(n_train, n_valid);
    splits.test = take(n_train + n_valid, n_test);
    return splits;
}

}  // namespace seqgrad
