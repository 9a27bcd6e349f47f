// The browser's locale, taken safely. A browser started under a POSIX locale (LANG=C.UTF-8) can
// report a tag that Intl refuses, such as "en-US@posix": every Intl constructor given it throws
// RangeError "Invalid language tag", and uPlot builds one from navigator.language as it loads. This
// module is imported before uPlot: it picks the first of the browser's languages that Intl accepts
// (with a POSIX "@modifier" or ".charset" dropped), else "en", and when navigator.language itself is
// refused, makes it answer that one.

function accepted(tag) {
  if (typeof tag !== 'string' || !tag) return null;
  for (const candidate of [tag, tag.replace(/[.@].*$/, '').replace(/_/g, '-')]) {
    try {
      const [canonical] = Intl.getCanonicalLocales(candidate);
      if (canonical) {
        new Intl.NumberFormat(canonical);
        return canonical;
      }
    } catch {
      // Refused: try the next form.
    }
  }
  return null;
}

function browserTags() {
  try {
    return [...(navigator.languages ?? []), navigator.language];
  } catch {
    return [];
  }
}

export const locale = browserTags().map(accepted).find(Boolean) ?? 'en';

if (accepted(navigator.language) !== navigator.language) {
  Object.defineProperty(navigator, 'language', { value: locale, configurable: true });
}
