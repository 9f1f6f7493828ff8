// The date-translation task: human-readable dates -> ISO 8601 ("saturday, march 3, 2001" ->
// "2001-03-03"), the classic first exercise for attention models. Pairs are generated, so the
// project trains on something real without downloading anything.
//
// Formats. A format is a pattern of fields and literal characters:
//   EEEE monday     EEE mon     MMMM march   MMM mar   MM 03   M 3
//   dd   05         d   5       do   5th (ordinal)     YYY 1979 (four digits)   YY 79
// It covers the exercise's formats (babel en_US short / medium / long / full and its list of
// patterns, where YYY means the calendar year here), lower-cased, with and without commas, and
// other natural forms. date_format_names() lists them all. Conventions, so that every string
// has exactly one meaning:
//   - slash forms ending in the year are month-first, as in en_US ("5/3/79" is may 3);
//     year-first slash forms are year/month/day ("1979/05/03");
//   - dot and space-separated numeric forms are day-first ("03.05.79", "3 05 79" are may 3);
//   - two-digit years follow strptime's %y: 69..99 -> 1969..1999, 00..68 -> 2000..2068, so a
//     two-digit-year format is only used for years 1969..2068;
//   - four-digit years are 1900..2099.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seqgrad/data/corpus.h"

namespace seqgrad {

/// A day of the proleptic Gregorian calendar.
struct Date {
    int year = 1970;
    int month = 1;  ///< 1..12
    int day = 1;    ///< 1..31
};

/// The range of years the generator draws from.
constexpr int kFirstDateYear = 1900;
constexpr int kLastDateYear = 2099;

/// True if `date` exists (month 1..12, day within the month, 29 february in leap years).
bool is_valid_date(const Date& date);

/// Days since 1970-01-01 (negative before). `date` must be valid.
int64_t days_since_epoch(const Date& date);
/// The inverse of days_since_epoch().
Date date_from_days(int64_t days);

/// 0 = monday ... 6 = sunday.
int day_of_week(const Date& date);

/// "YYYY-MM-DD", the task's target.
std::string to_iso(const Date& date);

/// The names of all formats the generator uses ("short", "medium", "long", "full", then the
/// patterns themselves, e.g. "d MMM YYY", "dd.MM.YY").
std::vector<std::string> date_format_names();

/// The pattern of a named format ("full" -> "EEEE, MMMM d, YYY"); throws std::invalid_argument
/// for an unknown name.
std::string date_format_pattern(std::string_view format_name);

/// True if the format can write `year` unambiguously (two-digit years: 1969..2068 only).
bool date_format_accepts_year(std::string_view format_name, int year);

/// `date` written in the named format, lower-case. Throws std::invalid_argument for an unknown
/// format, an invalid date, or a year the format cannot write.
std::string format_date(const Date& date, std::string_view format_name);

/// `n` pairs (human-readable source, ISO target), all sources distinct. For each pair a format
/// is drawn uniformly, then a day uniformly among those the format can write. Deterministic:
/// the same (n, seed) gives the same pairs on every platform. Throws std::runtime_error if `n`
/// distinct sources cannot be found (n in the millions).
std::vector<SentencePair> generate_dates(size_t n, uint64_t seed);

/// Train / validation / test sets with no source string in more than one of them (nor twice
/// in one): the first n_train, next n_valid and last n_test of generate_dates(total, seed).
struct DateSplits {
    std::vector<SentencePair> train, valid, test;
};
DateSplits make_date_splits(size_t n_train, size_t n_valid, size_t n_test, uint64_t seed);

}  // namespace seqgrad
