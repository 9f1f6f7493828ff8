// The human-readable -> ISO date generator (data/dates.h).
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "seqgrad/data/dates.h"

using namespace seqgrad;

TEST_CASE("calendar arithmetic: days since 1970, weekdays, validity") {
    CHECK(days_since_epoch({1970, 1, 1}) == 0);
    CHECK(days_since_epoch({2000, 3, 1}) == 11017);
    CHECK(days_since_epoch({1969, 12, 31}) == -1);
    for (int64_t d = days_since_epoch({1900, 1, 1}); d <= days_since_epoch({2099, 12, 31});
         d += 97) {
        const Date date = date_from_days(d);
        REQUIRE(is_valid_date(date));
        REQUIRE(days_since_epoch(date) == d);
    }
    // Weekdays (0 = monday) of dates whose weekday is known.
    CHECK(day_of_week({2001, 3, 3}) == 5);      // saturday
    CHECK(day_of_week({1970, 1, 1}) == 3);      // thursday
    CHECK(day_of_week({2000, 1, 1}) == 5);      // saturday
    CHECK(day_of_week({1900, 1, 1}) == 0);      // monday
    CHECK(day_of_week({2018, 5, 9}) == 2);      // wednesday
    CHECK(day_of_week({1969, 7, 20}) == 6);     // sunday (moon landing)
    CHECK(is_valid_date({2000, 2, 29}));        // divisible by 400: leap
    CHECK_FALSE(is_valid_date({1900, 2, 29}));  // divisible by 100 only: not leap
    CHECK_FALSE(is_valid_date({2001, 4, 31}));
    CHECK_FALSE(is_valid_date({2001, 13, 1}));
    CHECK(to_iso({1979, 5, 3}) == "1979-05-03");
}

TEST_CASE("every format writes the hand-checked string for 3 march 2001 (a saturday)") {
    const std::map<std::string, std::string> expected = {
        {"short", "3/3/01"},
        {"medium", "mar 3, 2001"},
        {"long", "march 3, 2001"},
        {"full", "saturday, march 3, 2001"},
        {"d MMM YYY", "3 mar 2001"},
        {"d MMMM YYY", "3 march 2001"},
        {"dd MMM YYY", "03 mar 2001"},
        {"d MMM, YYY", "3 mar, 2001"},
        {"d MMMM, YYY", "3 march, 2001"},
        {"dd, MMM YYY", "03, mar 2001"},
        {"d MM YY", "3 03 01"},
        {"MMMM d YYY", "march 3 2001"},
        {"MMMM d, YYY", "march 3, 2001"},
        {"dd.MM.YY", "03.03.01"},
        {"MMM d YYY", "mar 3 2001"},
        {"EEEE MMMM d YYY", "saturday march 3 2001"},
        {"EEEE, MMMM d YYY", "saturday, march 3 2001"},
        {"EEEE d MMMM YYY", "saturday 3 march 2001"},
        {"EEEE, d MMMM YYY", "saturday, 3 march 2001"},
        {"EEE, d MMM YYY", "sat, 3 mar 2001"},
        {"EEE, MMM d, YYY", "sat, mar 3, 2001"},
        {"MMMM do, YYY", "march 3rd, 2001"},
        {"do MMMM YYY", "3rd march 2001"},
        {"the do of MMMM, YYY", "the 3rd of march, 2001"},
        {"YYY/MM/dd", "2001/03/03"},
        {"YYY-MM-dd", "2001-03-03"},
        {"MM/dd/YYY", "03/03/2001"},
        {"M/d/YYY", "3/3/2001"},
        {"MM/dd/YY", "03/03/01"},
        {"dd.MM.YYY", "03.03.2001"},
        {"d.M.YYY", "3.3.2001"},
        {"dd MM YYY", "03 03 2001"},
    };
    const auto names = date_format_names();
    CHECK(names.size() == expected.size());
    for (const auto& name : names) {
        REQUIRE_MESSAGE(expected.count(name) == 1, "no expectation for format " << name);
        CHECK_MESSAGE(format_date({2001, 3, 3}, name) == expected.at(name), "format " << name);
    }
}

TEST_CASE("month-first and day-first conventions, ordinals, weekday names") {
    const Date may3{1979, 5, 3};                    // a thursday
    CHECK(format_date(may3, "short") == "5/3/79");  // slash, year last: month first
    CHECK(format_date(may3, "MM/dd/YYY") == "05/03/1979");
    CHECK(format_date(may3, "dd.MM.YY") == "03.05.79");     // dots: day first
    CHECK(format_date(may3, "d MM YY") == "3 05 79");       // spaces: day first
    CHECK(format_date(may3, "YYY/MM/dd") == "1979/05/03");  // year first
    CHECK(format_date(may3, "d MMMM YYY") == "3 may 1979");
    CHECK(format_date({2018, 5, 9}, "EEEE d MMMM YYY") == "wednesday 9 may 2018");
    CHECK(format_date({1979, 3, 5}, "full") == "monday, march 5, 1979");
    CHECK(format_date({1979, 3, 5}, "medium") == "mar 5, 1979");
    CHECK(format_date({2000, 1, 1}, "do MMMM YYY") == "1st january 2000");
    CHECK(format_date({2000, 1, 2}, "do MMMM YYY") == "2nd january 2000");
    CHECK(format_date({2000, 1, 11}, "do MMMM YYY") == "11th january 2000");
    CHECK(format_date({2000, 1, 12}, "do MMMM YYY") == "12th january 2000");
    CHECK(format_date({2000, 1, 13}, "do MMMM YYY") == "13th january 2000");
    CHECK(format_date({2000, 1, 22}, "do MMMM YYY") == "22nd january 2000");
    CHECK(format_date({2000, 1, 31}, "do MMMM YYY") == "31st january 2000");
    CHECK(format_date({2099, 12, 31}, "EEE, d MMM YYY") == "thu, 31 dec 2099");
}

TEST_CASE("two-digit years follow strptime %y: 69-99 are 19xx, 00-68 are 20xx") {
    CHECK(date_format_accepts_year("short", 1969));
    CHECK(date_format_accepts_year("short", 2068));
    CHECK_FALSE(date_format_accepts_year("short", 1968));
    CHECK_FALSE(date_format_accepts_year("dd.MM.YY", 2069));
    CHECK(date_format_accepts_year("long", 1900));
    CHECK(date_format_accepts_year("long", 2099));
    CHECK_FALSE(date_format_accepts_year("long", 2100));
    CHECK(format_date({1969, 1, 1}, "dd.MM.YY") == "01.01.69");
    CHECK(format_date({2068, 12, 31}, "dd.MM.YY") == "31.12.68");
    CHECK_THROWS_AS(format_date({1968, 1, 1}, "dd.MM.YY"), std::invalid_argument);
    CHECK_THROWS_AS(format_date({2001, 2, 29}, "long"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(format_date({2001, 1, 1}, "YYYY"), "unknown date format \"YYYY\"",
                         std::invalid_argument);
    CHECK(date_format_pattern("full") == "EEEE, MMMM d, YYY");

    // In generated data, every two-digit year must decode back to the target's year. The year
    // is the last run of digits in the source, except in year-first forms ("1979/05/03").
    for (const auto& pair : generate_dates(2000, 11)) {
        const int year = std::stoi(pair.target.substr(0, 4));
        REQUIRE(year >= kFirstDateYear);
        REQUIRE(year <= kLastDateYear);
        std::vector<std::string> runs;
        std::string run;
        for (char ch : pair.source + " ") {
            if (ch >= '0' && ch <= '9') {
                run += ch;
            } else if (!run.empty()) {
                runs.push_back(run);
                run.clear();
            }
        }
        REQUIRE(!runs.empty());
        if (runs.front().size() == 4) continue;  // year first
        if (runs.back().size() == 2) {
            const int yy = std::stoi(runs.back());
            CHECK_MESSAGE(year == (yy >= 69 ? 1900 + yy : 2000 + yy), pair.source);
        } else {
            CHECK(std::stoi(runs.back()) == year);
        }
    }
}

TEST_CASE("generate_dates is deterministic, distinct, and its targets are right") {
    const auto a = generate_dates(300, 2024);
    const auto b = generate_dates(300, 2024);
    const auto c = generate_dates(300, 2025);
    REQUIRE(a.size() == 300);
    bool all_equal = true, all_same_as_other_seed = true;
    for (size_t i = 0; i < a.size(); ++i) {
        all_equal = all_equal && a[i].source == b[i].source && a[i].target == b[i].target;
        all_same_as_other_seed = all_same_as_other_seed && a[i].source == c[i].source;
    }
    CHECK(all_equal);
    CHECK_FALSE(all_same_as_other_seed);

    std::set<std::string> sources;
    for (const auto& pair : a) {
        sources.insert(pair.source);
        // Targets are YYYY-MM-DD of a valid date.
        REQUIRE(pair.target.size() == 10);
        const Date date{std::stoi(pair.target.substr(0, 4)), std::stoi(pair.target.substr(5, 2)),
                        std::stoi(pair.target.substr(8, 2))};
        CHECK(is_valid_date(date));
        CHECK(to_iso(date) == pair.target);
        // The source is that date in one of the formats.
        bool found = false;
        for (const auto& name : date_format_names()) {
            found = found || (date_format_accepts_year(name, date.year) &&
                              format_date(date, name) == pair.source);
        }
        CHECK_MESSAGE(found, pair.source << " -> " << pair.target);
    }
    CHECK(sources.size() == a.size());
}

TEST_CASE("generated data covers every format") {
    // Formats are drawn uniformly: 600 pairs give each of the 32 formats about 19 times.
    std::set<std::string> used;
    for (const auto& pair : generate_dates(600, 3)) {
        const Date date{std::stoi(pair.target.substr(0, 4)), std::stoi(pair.target.substr(5, 2)),
                        std::stoi(pair.target.substr(8, 2))};
        for (const auto& name : date_format_names()) {
            if (date_format_accepts_year(name, date.year) &&
                format_date(date, name) == pair.source) {
                used.insert(name);
            }
        }
    }
    CHECK(used.size() == date_format_names().size());
}

TEST_CASE("splits have the requested sizes and share no source string") {
    const DateSplits splits = make_date_splits(3000, 500, 500, 99);
    CHECK(splits.train.size() == 3000);
    CHECK(splits.valid.size() == 500);
    CHECK(splits.test.size() == 500);
    std::set<std::string> train, valid;
    for (const auto& p : splits.train) train.insert(p.source);
    for (const auto& p : splits.valid) valid.insert(p.source);
    CHECK(train.size() == 3000);
    CHECK(valid.size() == 500);
    for (const auto& p : splits.valid) CHECK(train.count(p.source) == 0);
    for (const auto& p : splits.test) {
        CHECK(train.count(p.source) == 0);
        CHECK(valid.count(p.source) == 0);
    }
    const DateSplits again = make_date_splits(3000, 500, 500, 99);
    CHECK(again.test.back().source == splits.test.back().source);
}
