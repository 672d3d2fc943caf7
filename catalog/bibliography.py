"""Every work the library cites, with full entries, under one key per work.

    from catalog import bibliography
    bibliography.get("kozlov2019").text()      # one-line citation
    bibliography.get("kozlov2019").bibtex()    # a BibTeX record
    bibliography.keys()                        # sorted keys
    bibliography.cite(["kozlov2019", "salnikova2023"], bibtex=False)

Code below the catalog cites by author and year in its docstrings and comments ("Kozlov (2019)",
"Salnikova, Kugushev and Demidov 2023", "Munthe-Kaas 1999"); :func:`citations_in` finds those
citations in a text and :func:`unresolved` lists the ones no entry here matches (same year, the name one
of the entry's author surnames), which is how the test suite keeps the two in step. Catalog entries
hold keys of this module in their ``references``. A DOI is given only where it is certain.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeGuard

from .errors import CatalogError, UnknownWorkError

__all__ = ["Entry", "CatalogError", "UnknownWorkError", "WORKS", "keys", "get", "cite", "is_key", "reference_text",
           "citations_in", "lookup", "unresolved"]


@dataclass(frozen=True)
class Entry:
    """One cited work. ``kind`` is the BibTeX type (article, book, phdthesis, misc, ...)."""

    key: str
    kind: str
    authors: tuple[str, ...]
    title: str
    venue: str
    year: int | None
    volume: str = ""
    pages: str = ""
    doi: str = ""
    note: str = ""
    aliases: tuple[str, ...] = ()

    def surnames(self) -> tuple[str, ...]:
        """Author surnames: the words after the last initial ("C. F. Van Loan" -> "Van Loan")."""
        out = []
        for a in self.authors:
            words = a.split()
            k = max((i for i, w in enumerate(words) if w.endswith(".")), default=-1)
            out.append(" ".join(words[k + 1:]) or a)
        return tuple(out)

    def text(self) -> str:
        """The one-line citation: authors, title, venue volume (year) pages, doi."""
        authors = _join_names(self.authors)
        title = f'"{self.title}"' if self.kind in ("article", "incollection", "inproceedings") else self.title
        where = self.venue
        if self.volume:
            where += ("," if where[-1:].isdigit() else "") + f" {self.volume}"
        if self.year is not None:
            where += f" ({self.year})" if self.kind == "article" else f", {self.year}"
        if self.pages:
            where += f" {self.pages}" if self.kind == "article" else f", {self.pages}"
        parts = [authors, title, where]
        if self.note:
            parts.append(self.note)
        line = ", ".join(p for p in parts if p)
        if self.doi:
            line += f", doi:{self.doi}"
        return line + "."

    def bibtex(self) -> str:
        """A BibTeX record of the entry."""
        fields = [("author", " and ".join(self.authors)), ("title", "{" + self.title + "}")]
        venue_field = {"article": "journal", "book": "publisher", "phdthesis": "school",
                       "incollection": "booktitle"}.get(self.kind, "howpublished")
        fields.append((venue_field, self.venue))
        if self.year is not None:
            fields.append(("year", str(self.year)))
        if self.volume:
            fields.append(("volume", self.volume))
        if self.pages:
            fields.append(("pages", self.pages.replace("-", "--")))
        if self.doi:
            fields.append(("doi", self.doi))
        if self.note:
            fields.append(("note", self.note))
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
        return f"@{self.kind}{{{self.key},\n{body}\n}}"


def _join_names(names):
    names = list(names)
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _e(key, kind, authors, title, venue, year, **kw):
    return Entry(key, kind, tuple(authors), title, venue, year, **kw)


_WORKS = [
    # the five source papers of the project
    _e("kozlov2019", "article", ["V. V. Kozlov"],
       "On the dynamics of systems with one-sided non-integrable constraints",
       "Theoretical and Applied Mechanics", 2019, volume="46", pages="1-14", doi="10.2298/TAM190123005K"),
    _e("kozlov2008", "article", ["V. V. Kozlov"], "Gauss principle and realization of constraints",
       "Regular and Chaotic Dynamics", 2008, volume="13", pages="431-435", doi="10.1134/S1560354708050055"),
    _e("talamucci2025", "article", ["F. Talamucci"], "On the Četaev condition for nonholonomic systems",
       "AppliedMath", 2025, volume="5", pages="29", doi="10.3390/appliedmath5010029"),
    _e("salnikova2023", "article", ["T. V. Salnikova", "E. I. Kugushev", "A. A. Demidov"],
       "Dynamics of systems with one-sided differential constraints",
       "Doklady Rossiiskoi Akademii Nauk. Matematika, Informatika, Protsessy Upravleniya", 2023,
       doi="10.31857/S2686954323600167", note="in Russian"),
    _e("kozlov_servo_lectures", "misc", ["V. V. Kozlov"],
       "Lectures on servo-constraints (nonholonomic, vakonomic and servo models; systems on Lie groups)",
       "slides, in English and Russian", None, note="undated"),
    # mechanics
    _e("beghin1922", "phdthesis", ["H. Béghin"], "Étude théorique des compas gyrostatiques Anschütz et Sperry",
       "Faculté des sciences de Paris", 1922),
    _e("cetaev1932", "article", ["N. G. Četaev"], "On the Gauss principle",
       "Izvestiya Fiziko-Matematicheskogo Obshchestva pri Kazanskom Universitete, Ser. 3", 1932,
       volume="6", pages="68-71", note="1932-1933, in Russian", aliases=("Chetaev",)),
    _e("bizyaev2017", "article", ["I. A. Bizyaev", "A. V. Borisov", "I. S. Mamaev"],
       "The Chaplygin sleigh with parametric excitation: chaotic dynamics and nonholonomic acceleration",
       "Regular and Chaotic Dynamics", 2017, volume="22", pages="955-975"),
    _e("bizyaev2019", "article", ["I. A. Bizyaev", "A. V. Borisov", "V. V. Kozlov", "I. S. Mamaev"],
       "Fermi-like acceleration and power-law energy growth in nonholonomic systems",
       "Nonlinearity", 2019, volume="32", pages="3209"),
    _e("benettin1980", "article", ["G. Benettin", "L. Galgani", "A. Giorgilli", "J.-M. Strelcyn"],
       "Lyapunov characteristic exponents for smooth dynamical systems and for Hamiltonian systems; a method for "
       "computing all of them. Part 1: Theory", "Meccanica", 1980, volume="15", pages="9-20"),
    _e("shimada1979", "article", ["I. Shimada", "T. Nagashima"],
       "A numerical approach to ergodic problem of dissipative dynamical systems",
       "Progress of Theoretical Physics", 1979, volume="61", pages="1605-1616"),
    _e("cincotta2000", "article", ["P. M. Cincotta", "C. Simó"],
       "Simple tools to study global dynamics in non-axisymmetric galactic potentials - I",
       "Astronomy and Astrophysics Supplement Series", 2000, volume="147", pages="205-228"),
    _e("trefethen2000", "book", ["L. N. Trefethen"], "Spectral Methods in MATLAB", "SIAM, Philadelphia", 2000),
    _e("boyd2001", "book", ["J. P. Boyd"], "Chebyshev and Fourier Spectral Methods", "Dover, Mineola, 2nd edition",
       2001),
    _e("dowell1971", "article", ["M. Dowell", "P. Jarratt"],
       "A modified regula falsi method for computing the root of an equation", "BIT", 1971, volume="11",
       pages="168-174"),
    _e("sparrow1982", "book", ["C. Sparrow"], "The Lorenz Equations: Bifurcations, Chaos, and Strange Attractors",
       "Springer, New York", 1982),
    _e("wolf1985", "article", ["A. Wolf", "J. B. Swift", "H. L. Swinney", "J. A. Vastano"],
       "Determining Lyapunov exponents from a time series", "Physica D", 1985, volume="16", pages="285-317"),
    _e("chaplygin1911", "article", ["S. A. Chaplygin"],
       "On the theory of motion of nonholonomic systems. The reducing-multiplier theorem",
       "Matematicheskii Sbornik", 1911, volume="28", pages="303-314",
       note="English translation: Regul. Chaotic Dyn. 13 (2008) 369-376", doi="10.1134/S1560354708040102"),
    _e("caratheodory1933", "article", ["C. Carathéodory"], "Der Schlitten",
       "Zeitschrift für Angewandte Mathematik und Mechanik", 1933, volume="13", pages="71-76"),
    _e("suslov1946", "book", ["G. K. Suslov"], "Theoretical Mechanics", "Gostekhizdat, Moscow-Leningrad", 1946,
       note="in Russian"),
    _e("jacobi1829", "book", ["C. G. J. Jacobi"], "Fundamenta nova theoriae functionum ellipticarum",
       "Borntraeger, Königsberg", 1829),
    _e("jacobi1849", "article", ["C. G. J. Jacobi"], "Sur la rotation d'un corps",
       "Journal für die reine und angewandte Mathematik", 1849, volume="39", pages="293-350"),
    _e("byrd-friedman1971", "book", ["P. F. Byrd", "M. D. Friedman"],
       "Handbook of Elliptic Integrals for Engineers and Scientists", "2nd ed., Springer, Berlin", 1971),
    _e("landau-lifshitz1976", "book", ["L. D. Landau", "E. M. Lifshitz"], "Mechanics",
       "Course of Theoretical Physics vol. 1, 3rd ed., Pergamon, Oxford", 1976),
    _e("landau-lifshitz1975", "book", ["L. D. Landau", "E. M. Lifshitz"], "The Classical Theory of Fields",
       "Course of Theoretical Physics vol. 2, 4th ed., Pergamon, Oxford", 1975),
    _e("holm-marsden-ratiu-weinstein1985", "article",
       ["D. D. Holm", "J. E. Marsden", "T. Ratiu", "A. Weinstein"],
       "Nonlinear stability of fluid and plasma equilibria", "Physics Reports", 1985, volume="123",
       pages="1-116"),
    _e("holm-marsden-ratiu1998", "article", ["D. D. Holm", "J. E. Marsden", "T. S. Ratiu"],
       "The Euler-Poincaré equations and semidirect products with applications to continuum theories",
       "Advances in Mathematics", 1998, volume="137", pages="1-81"),
    _e("marsden-ratiu1999", "book", ["J. E. Marsden", "T. S. Ratiu"], "Introduction to Mechanics and Symmetry",
       "2nd ed., Texts in Applied Mathematics 17, Springer, New York", 1999),
    # Lie algebras, groups, geometric algebra
    _e("bianchi1898", "article", ["L. Bianchi"],
       "Sugli spazii a tre dimensioni che ammettono un gruppo continuo di movimenti",
       "Memorie di Matematica e di Fisica della Società Italiana delle Scienze, Serie 3", 1898, volume="11",
       pages="267-352"),
    _e("ellis-maccallum1969", "article", ["G. F. R. Ellis", "M. A. H. MacCallum"],
       "A class of homogeneous cosmological models", "Communications in Mathematical Physics", 1969,
       volume="12", pages="108-141"),
    _e("stephani2003", "book", ["H. Stephani", "D. Kramer", "M. MacCallum", "C. Hoenselaers", "E. Herlt"],
       "Exact Solutions of Einstein's Field Equations", "2nd ed., Cambridge University Press", 2003),
    _e("humphreys1972", "book", ["J. E. Humphreys"], "Introduction to Lie Algebras and Representation Theory",
       "Graduate Texts in Mathematics 9, Springer, New York", 1972),
    _e("jacobson1962", "book", ["N. Jacobson"], "Lie Algebras",
       "Interscience Tracts in Pure and Applied Mathematics 10, Interscience, New York", 1962),
    _e("murray-li-sastry1994", "book", ["R. M. Murray", "Z. Li", "S. S. Sastry"],
       "A Mathematical Introduction to Robotic Manipulation", "CRC Press, Boca Raton", 1994),
    _e("sola2018", "misc", ["J. Solà", "J. Deray", "D. Atchuthan"],
       "A micro Lie theory for state estimation in robotics", "arXiv:1812.01537", 2018),
    _e("hestenes-sobczyk1984", "book", ["D. Hestenes", "G. Sobczyk"],
       "Clifford Algebra to Geometric Calculus", "Reidel, Dordrecht", 1984),
    _e("doran-lasenby2003", "book", ["C. Doran", "A. Lasenby"], "Geometric Algebra for Physicists",
       "Cambridge University Press", 2003),
    _e("gunn2017", "article", ["C. Gunn"], "Geometric algebras for Euclidean geometry",
       "Advances in Applied Clifford Algebras", 2017, volume="27", pages="185-208"),
    # numerical integration
    _e("kutta1901", "article", ["W. Kutta"],
       "Beitrag zur näherungsweisen Integration totaler Differentialgleichungen",
       "Zeitschrift für Mathematik und Physik", 1901, volume="46", pages="435-453"),
    _e("kahan1965", "article", ["W. Kahan"], "Further remarks on reducing truncation errors",
       "Communications of the ACM", 1965, volume="8", pages="40", doi="10.1145/363707.363723"),
    _e("cooper1987", "article", ["G. J. Cooper"], "Stability of Runge-Kutta methods for trajectory problems",
       "IMA Journal of Numerical Analysis", 1987, volume="7", pages="1-13", doi="10.1093/imanum/7.1.1"),
    _e("yoshida1990", "article", ["H. Yoshida"], "Construction of higher order symplectic integrators",
       "Physics Letters A", 1990, volume="150", pages="262-268", doi="10.1016/0375-9601(90)90092-3"),
    _e("moser-veselov1991", "article", ["J. Moser", "A. P. Veselov"],
       "Discrete versions of some classical integrable systems and factorization of matrix polynomials",
       "Communications in Mathematical Physics", 1991, volume="139", pages="217-243",
       doi="10.1007/BF02352494"),
    _e("fedorov-zenkov2005", "article", ["Y. N. Fedorov", "D. V. Zenkov"],
       "Discrete nonholonomic LL systems on Lie groups", "Nonlinearity", 2005, volume="18",
       pages="2211-2241", doi="10.1088/0951-7715/18/5/017"),
    _e("fedorov-jovanovic2004", "article", ["Y. N. Fedorov", "B. Jovanović"],
       "Nonholonomic LR systems as generalized Chaplygin systems with an invariant measure and geodesic flows on "
       "homogeneous spaces", "Journal of Nonlinear Science", 2004, volume="14", pages="341-381"),
    _e("benito-martin-de-diego2005", "article", ["R. Benito", "D. Martín de Diego"],
       "Discrete vakonomic mechanics", "Journal of Mathematical Physics", 2005, volume="46",
       pages="083521", doi="10.1063/1.2008214"),
    _e("mclachlan-perlmutter2006", "article", ["R. I. McLachlan", "M. Perlmutter"],
       "Integrators for nonholonomic mechanical systems", "Journal of Nonlinear Science", 2006, volume="16",
       pages="283-328", doi="10.1007/s00332-005-0698-1"),
    _e("ferraro-iglesias-martin-de-diego2008", "article", ["S. Ferraro", "D. Iglesias", "D. Martín de Diego"],
       "Momentum and energy preserving integrators for nonholonomic dynamics", "Nonlinearity", 2008,
       volume="21", pages="1911-1928", doi="10.1088/0951-7715/21/8/009"),
    _e("iglesias-marrero-martin-de-diego-martinez2008", "article",
       ["D. Iglesias", "J. C. Marrero", "D. Martín de Diego", "E. Martínez"],
       "Discrete nonholonomic Lagrangian systems on Lie groupoids", "Journal of Nonlinear Science", 2008,
       volume="18"),
    _e("ferraro-jimenez-martin-de-diego2015", "article", ["S. Ferraro", "F. Jiménez", "D. Martín de Diego"],
       "New developments on the geometric nonholonomic integrator", "Nonlinearity", 2015, volume="28",
       pages="871-900"),
    _e("bou-rabee-marsden2009", "article", ["N. Bou-Rabee", "J. E. Marsden"],
       "Hamilton-Pontryagin integrators on Lie groups part I: introduction and structure-preserving properties",
       "Foundations of Computational Mathematics", 2009, volume="9", pages="197-219",
       doi="10.1007/s10208-008-9030-4"),
    _e("modin-verdier2020", "article", ["K. Modin", "O. Verdier"], "What makes nonholonomic integrators work?",
       "Numerische Mathematik", 2020, volume="145", pages="405-435", doi="10.1007/s00211-020-01126-y"),
    _e("squire-trefethen1998", "article", ["W. Squire", "G. Trefethen"],
       "Using complex variables to estimate derivatives of real functions", "SIAM Review", 1998, volume="40",
       pages="110-112", doi="10.1137/S003614459631241X"),
    _e("mclachlan1993", "article", ["R. I. McLachlan"], "Explicit Lie-Poisson integration and the Euler equations",
       "Physical Review Letters", 1993, volume="71", pages="3043-3046", doi="10.1103/PhysRevLett.71.3043"),
    _e("crouch-grossman1993", "article", ["P. E. Crouch", "R. Grossman"],
       "Numerical integration of ordinary differential equations on manifolds",
       "Journal of Nonlinear Science", 1993, volume="3", pages="1-33"),
    _e("hairer-wanner1996", "book", ["E. Hairer", "G. Wanner"],
       "Solving Ordinary Differential Equations II: Stiff and Differential-Algebraic Problems",
       "2nd ed., Springer Series in Computational Mathematics 14, Springer, Berlin", 1996),
    _e("hairer-norsett-wanner1993", "book", ["E. Hairer", "S. P. Nørsett", "G. Wanner"],
       "Solving Ordinary Differential Equations I: Nonstiff Problems",
       "2nd ed., Springer Series in Computational Mathematics 8, Springer, Berlin", 1993),
    _e("shampine1986", "article", ["L. F. Shampine"], "Some practical Runge-Kutta formulas",
       "Mathematics of Computation", 1986, volume="46", pages="135-150"),
    _e("golub-vanloan2013", "book", ["G. H. Golub", "C. F. Van Loan"], "Matrix Computations", "Johns Hopkins "
       "University Press, Baltimore, 4th edition", 2013),
    _e("krawczyk1969", "article", ["R. Krawczyk"],
       "Newton-Algorithmen zur Bestimmung von Nullstellen mit Fehlerschranken", "Computing", 1969,
       volume="4", pages="187-201", doi="10.1007/BF02234767"),
    _e("moore2009", "book", ["R. E. Moore", "R. B. Kearfott", "M. J. Cloud"], "Introduction to Interval Analysis",
       "SIAM, Philadelphia", 2009, doi="10.1137/1.9780898717716"),
    _e("rump2010", "article", ["S. M. Rump"], "Verification methods: rigorous results using floating-point arithmetic",
       "Acta Numerica", 2010, volume="19", pages="287-449", doi="10.1017/S096249291000005X"),
    _e("johansson2017", "article", ["F. Johansson"],
       "Arb: efficient arbitrary-precision midpoint-radius interval arithmetic", "IEEE Transactions on Computers",
       2017, volume="66", pages="1281-1292", doi="10.1109/TC.2017.2690633"),
    _e("blum1998", "book", ["L. Blum", "F. Cucker", "M. Shub", "S. Smale"], "Complexity and Real Computation",
       "Springer, New York", 1998, doi="10.1007/978-1-4612-0701-6"),
    _e("tsitouras2011", "article", ["Ch. Tsitouras"],
       "Runge-Kutta pairs of order 5(4) satisfying only the first column simplifying assumption",
       "Computers & Mathematics with Applications", 2011, volume="62", pages="770-775",
       doi="10.1016/j.camwa.2011.06.002"),
    _e("butcher1963", "article", ["J. C. Butcher"], "Coefficients for the study of Runge-Kutta integration processes",
       "Journal of the Australian Mathematical Society", 1963, volume="3", pages="185-201",
       doi="10.1017/S1446788700027932"),
    _e("heun1900", "article", ["K. Heun"],
       "Neue Methoden zur approximativen Integration der Differentialgleichungen einer unabhängigen Veränderlichen",
       "Zeitschrift für Mathematik und Physik", 1900, volume="45", pages="23-38"),
    _e("euler1768", "book", ["L. Euler"], "Institutionum calculi integralis, volumen primum",
       "Impensis Academiae Imperialis Scientiarum, Petropoli", 1768),
    _e("munthe-kaas1999", "article", ["H. Munthe-Kaas"], "High order Runge-Kutta methods on manifolds",
       "Applied Numerical Mathematics", 1999, volume="29", pages="115-127"),
    _e("iserles2000", "article", ["A. Iserles", "H. Z. Munthe-Kaas", "S. P. Nørsett", "A. Zanna"],
       "Lie-group methods", "Acta Numerica", 2000, volume="9", pages="215-365"),
    _e("celledoni2003", "article", ["E. Celledoni", "A. Marthinsen", "B. Owren"], "Commutator-free Lie group methods",
       "Future Generation Computer Systems", 2003, volume="19", pages="341-352"),
    _e("paterson-stockmeyer1973", "article", ["M. S. Paterson", "L. J. Stockmeyer"],
       "On the number of nonscalar multiplications necessary to evaluate polynomials",
       "SIAM Journal on Computing", 1973, volume="2", pages="60-66"),
    _e("moler-vanloan2003", "article", ["C. Moler", "C. F. Van Loan"],
       "Nineteen dubious ways to compute the exponential of a matrix, twenty-five years later",
       "SIAM Review", 2003, volume="45", pages="3-49", doi="10.1137/S00361445024180"),
    _e("mclachlan-zanna2005", "article", ["R. I. McLachlan", "A. Zanna"],
       "The discrete Moser-Veselov algorithm for the free rigid body, revisited",
       "Foundations of Computational Mathematics", 2005, volume="5", pages="87-123"),
    _e("hairer2006", "book", ["E. Hairer", "C. Lubich", "G. Wanner"],
       "Geometric Numerical Integration: Structure-Preserving Algorithms for Ordinary Differential Equations",
       "2nd ed., Springer Series in Computational Mathematics 31, Springer, Berlin", 2006,
       doi="10.1007/3-540-30666-8"),
    _e("hairer-mclachlan-razakarivony2008", "article", ["E. Hairer", "R. I. McLachlan", "A. Razakarivony"],
       "Achieving Brouwer's law with implicit Runge-Kutta methods", "BIT Numerical Mathematics", 2008,
       volume="48", pages="231-243"),
    # polynomial systems, integrability
    _e("cox-little-oshea2005", "book", ["D. A. Cox", "J. Little", "D. O'Shea"], "Using Algebraic Geometry",
       "2nd ed., Graduate Texts in Mathematics 185, Springer, New York", 2005),
    _e("rouillier1999", "article", ["F. Rouillier"],
       "Solving zero-dimensional systems through the rational univariate representation",
       "Applicable Algebra in Engineering, Communication and Computing", 1999, volume="9", pages="433-461",
       doi="10.1007/s002000050114"),
    _e("sommese-wampler2005", "book", ["A. J. Sommese", "C. W. Wampler"],
       "The Numerical Solution of Systems of Polynomials Arising in Engineering and Science",
       "World Scientific, Singapore", 2005),
    _e("cartwright-sturmfels2013", "article", ["D. Cartwright", "B. Sturmfels"],
       "The number of eigenvalues of a tensor", "Linear Algebra and its Applications", 2013, volume="438",
       pages="942-952"),
    _e("yoshida1983", "article", ["H. Yoshida"],
       "Necessary condition for the existence of algebraic first integrals. I. Kowalevski's exponents",
       "Celestial Mechanics", 1983, volume="31", pages="363-379"),
    _e("furta1996", "article", ["S. D. Furta"], "On non-integrability of general systems of differential equations",
       "Zeitschrift für angewandte Mathematik und Physik", 1996, volume="47", pages="112-131"),
    _e("goriely2001", "book", ["A. Goriely"], "Integrability and Nonintegrability of Dynamical Systems",
       "Advanced Series in Nonlinear Dynamics 19, World Scientific, Singapore", 2001),
    _e("kovacs-silver-williams1999", "article", ["I. Kovacs", "D. S. Silver", "S. G. Williams"],
       "Determinants of commuting-block matrices", "The American Mathematical Monthly", 1999, volume="106",
       pages="950-952"),
    _e("dormand-prince1980", "article", ["J. R. Dormand", "P. J. Prince"],
       "A family of embedded Runge-Kutta formulae", "Journal of Computational and Applied Mathematics", 1980,
       volume="6", pages="19-26"),
    _e("engo2000", "article", ["K. Engo"], "On the construction of geometric integrators in the RKMK class",
       "BIT Numerical Mathematics", 2000, volume="40", pages="41-61"),
    _e("hall2015", "book", ["B. C. Hall"], "Lie Groups, Lie Algebras, and Representations: An Elementary Introduction",
       "Springer, Graduate Texts in Mathematics 222, 2nd ed.", 2015),
    _e("al-mohy-higham2011", "article", ["A. H. Al-Mohy", "N. J. Higham"],
       "Computing the action of the matrix exponential, with an application to exponential integrators",
       "SIAM Journal on Scientific Computing", 2011, volume="33", pages="488-511"),
    _e("higham2008", "book", ["N. J. Higham"], "Functions of Matrices: Theory and Computation",
       "SIAM, Philadelphia", 2008),
    _e("higham2002", "book", ["N. J. Higham"], "Accuracy and Stability of Numerical Algorithms",
       "2nd ed., SIAM, Philadelphia", 2002),
    _e("press2007", "book", ["W. H. Press", "S. A. Teukolsky", "W. T. Vetterling", "B. P. Flannery"],
       "Numerical Recipes: The Art of Scientific Computing", "3rd ed., Cambridge University Press", 2007),
    _e("knuth-buckholtz1967", "article", ["D. E. Knuth", "T. J. Buckholtz"],
       "Computation of tangent, Euler, and Bernoulli numbers", "Mathematics of Computation", 1967,
       volume="21", pages="663-688"),
    _e("pedersen-roy-szpirglas1993", "incollection", ["P. Pedersen", "M.-F. Roy", "A. Szpirglas"],
       "Counting real zeros in the multivariate case",
       "Computational Algebraic Geometry, Progress in Mathematics 109, Birkhauser", 1993, pages="203-224",
       doi="10.1007/978-1-4612-2752-6_15"),
    _e("brent-harvey2013", "incollection", ["R. P. Brent", "D. Harvey"],
       "Fast computation of Bernoulli, tangent and secant numbers",
       "Computational and Analytical Mathematics, Springer Proceedings in Mathematics & Statistics 50", 2013,
       pages="127-142"),
]

WORKS = {w.key: w for w in _WORKS}


def keys() -> list[str]:
    """Sorted keys of every work in the bibliography."""
    return sorted(WORKS)


def get(key: str) -> Entry:
    """The :class:`Entry` under ``key``; an unknown key raises :class:`UnknownWorkError` naming close matches."""
    try:
        return WORKS[key]
    except (KeyError, TypeError):
        close = difflib.get_close_matches(str(key), list(WORKS), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known keys: {', '.join(keys())}"
        raise UnknownWorkError(f"no work {key!r} in the bibliography{hint}") from None


def cite(keys_: str | Iterable[str], bibtex: bool = False) -> str:
    """The citations of ``keys_`` (one key or a list), one per line, or BibTeX records separated by blank lines."""
    ks = [keys_] if isinstance(keys_, str) else list(keys_)
    entries = [get(k) for k in ks]
    if bibtex:
        return "\n\n".join(e.bibtex() for e in entries)
    return "\n".join(e.text() for e in entries)


def is_key(ref: object) -> TypeGuard[str]:
    """True when ``ref`` is a key of the bibliography."""
    return isinstance(ref, str) and ref in WORKS


def reference_text(ref: object) -> str:
    """The full citation of a reference held by a catalog entry: a key's citation text, or ``ref`` itself
    (a user's TOML file may cite a work by free text)."""
    return WORKS[ref].text() if is_key(ref) else str(ref)


# ---- author-year citations in text ---------------------------------------------------------------

_NAME = r"[A-Z][A-Za-z\u00C0-\u017F'\u2019]*[a-z\u00E0-\u017F](?:-[A-Z][A-Za-z\u00C0-\u017F'\u2019]*[a-z\u00E0-\u017F])*"
_YEAR = r"(1[5-9]\d\d|20\d\d)"
#: "Kozlov (2019)", "Kozlov 2019", "Kozlov, 2019", "Yoshida's (1990)", "Salnikova et al. 2023",
#: "Moser & Veselov 1991", "Hairer-McLachlan-Razakarivony 2008": the last name before the year is taken.
CITATION = re.compile(rf"\b({_NAME})(?:'s|\u2019s)?(?: et al\.?)?,? \(?{_YEAR}\b")

#: capitalised words that precede a year without being an author
NOT_AUTHORS = frozenset({"Measured", "Published", "Received", "Revised", "Accepted", "Copyright", "Python",
                         "Doklady", "Version", "Table", "Figure", "Section", "Since", "In", "From", "Until",
                         "Before", "After", "Fall", "Spring", "Summer", "Winter", "January", "February",
                         "March", "April", "May", "June", "July", "August", "September", "October",
                         "November", "December", "Paris", "Moscow", "Springer", "Berlin"})


def _fold(s):
    s = unicodedata.normalize("NFKD", s).replace("\u00f8", "o").replace("\u00d8", "O")
    return "".join(c for c in s if not unicodedata.combining(c)).lower()


def _name_tokens(entry):
    out = set()
    for s in entry.surnames() + tuple(entry.aliases):
        f = _fold(s)
        out.add(f)
        out.update(f.split())
        out.add(f.replace(" ", ""))
    return out


def citations_in(text: str) -> list[tuple[str, int]]:
    """(name, year) pairs of the author-year citations in ``text`` (name as written, year as int)."""
    out = []
    for m in CITATION.finditer(text):
        name = re.sub(r"('|\u2019)s$", "", m.group(1))
        if name in NOT_AUTHORS:
            continue
        out.append((name, int(m.group(2))))
    return out


def lookup(name: str, year: int) -> list[str]:
    """Keys of the works of ``year`` with ``name`` among their authors ("Moser-Veselov" means both); of
    several, those with ``name`` as first author."""
    parts = [_fold(p) for p in name.split("-")]
    whole = _fold(name)
    hits = []
    for w in _WORKS:
        if w.year != year:
            continue
        tokens = _name_tokens(w)
        if whole in tokens or all(p in tokens for p in parts):
            hits.append(w.key)
    if len(hits) > 1:  # "Kozlov (2019)" is the work Kozlov wrote first, not one he co-wrote that year
        first = [k for k in hits if _fold(WORKS[k].surnames()[0]) in (whole, parts[0])]
        hits = first or hits
    return hits


def unresolved(text: str) -> list[str]:
    """The citations of ``text`` that no work of the bibliography matches, as "Name (year)" strings."""
    return [f"{n} ({y})" for n, y in citations_in(text) if not lookup(n, y)]
